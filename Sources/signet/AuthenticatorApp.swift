// `signet authenticator enroll|login|list|remove|change-pin`: the authenticator app played on Linux.
import ArgumentParser
import Foundation
import SignetClient
import SignetCore
import SignetScript

struct AuthenticatorApp: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "authenticator",
        abstract:
            "Play the authenticator app on an activated installation (signet device activate): enroll a PIN, log in with it, list, remove, change the PIN.",
        discussion: """
            Software keys (P-256) are kept sealed in the installation's folder (authenticators.sealed, under the same sealing key as \
            the device key). The PIN is proved to the provider with every use, which counts wrong ones: the 3rd waits 60 s, the 4th \
            180 s, the 5th removes the authenticator. Give the PIN with --pin (visible to other users of this machine) or --pin-stdin.
            """,
        subcommands: [Enroll.self, Login.self, List.self, Remove.self, ChangePIN.self])

    struct Enroll: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register an authenticator after a fresh login of the installation's user (default: the iOS PIN authenticator).")
        @OptionGroup var options: AuthenticatorOptionsGroup
        @Option(help: "The AAID (F1D0#1001 iOS PIN, F1D0#0001 Android PIN; the biometric ones need an OS that verifies the user).")
        var aaid = "F1D0#1001"

        func run() async throws {
            let pin = try AuthenticatorCatalog.kind(aaid)?.verification == .pin ? options.readPIN(prompt: "New PIN") : nil
            try await options.withAuthenticators { installation, authenticators in
                // Two factors (password and SMS code), so the authenticator's logins may assert two as well.
                let tokens = try await installation.logIn(
                    AuthorizationParameters(
                        clientID: installation.client.configuration.clientID, redirectURI: installation.client.configuration.redirectURI,
                        acrValues: "urn:signet:loa:2"),
                    via: installation.enrolment.boundClient)
                let stored = try await authenticators.register(aaid: aaid, pin: pin, accessToken: tokens.accessToken)
                print("Registered \(stored.aaid) (\(AuthenticatorCatalog.kind(stored.aaid)?.name ?? "?")), KeyID \(stored.keyID).")
            }
        }
    }

    struct Login: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Log in without a password: the provider's challenge signed by the authenticator (and the PIN).")
        @OptionGroup var options: AuthenticatorOptionsGroup
        @Option(help: "A transaction text to confirm with the login.") var transaction: String?

        func run() async throws {
            try await options.withAuthenticators { installation, authenticators in
                let parameters = AuthorizationParameters(
                    clientID: installation.client.configuration.clientID, redirectURI: installation.client.configuration.redirectURI)
                do {
                    let challenge = try await authenticators.login.challenge(
                        for: DeviceLoginInput(parameters: parameters, transactionText: transaction))
                    if let text = challenge.transactionText { print("Confirming: \(text)") }
                    guard let chosen = challenge.authenticators.first else { throw ValidationError("no authenticator on this installation") }
                    let pin = chosen.pin == nil ? nil : try options.readPIN(prompt: "PIN")
                    let result = try await authenticators.login.verify(challenge, keyID: chosen.keyID, pin: pin)
                    let tokens = try await result.exchangeForTokens()
                    let claims = tokens.idTokenClaims
                    print("Logged in as \(claims?.sub ?? "?"): acr \(claims?.acr ?? "-"), amr \(claims?.amr?.joined(separator: " ") ?? "-").")
                } catch let error as SignetClientError {
                    print(AuthenticatorApp.explain(error))
                    throw ExitCode(4)
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the authenticators kept here, with their PIN state, and what the provider says.")
        @OptionGroup var options: AuthenticatorOptionsGroup

        func run() async throws {
            try await options.withAuthenticators { installation, authenticators in
                let kept = try await authenticators.registered()
                if kept.isEmpty { print("No authenticators on this installation.") }
                for authenticator in kept {
                    let status = authenticator.pin == nil ? "" : "\tPIN \(AuthenticatorApp.describe(authenticator.pinGuard.status(now: Date())))"
                    print("\(authenticator.keyID)\t\(authenticator.aaid) \(AuthenticatorCatalog.kind(authenticator.aaid)?.name ?? "?")\(status)")
                }
                if case .activated(let device) = try await installation.enrolment.status() {
                    print("The provider lists \(device.authenticators.count) for this device.")
                }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Deregister an authenticator (or all): the provider forgets it, then this installation.")
        @OptionGroup var options: AuthenticatorOptionsGroup
        @Option(name: .customLong("key-id"), help: "The KeyID; default all.") var keyID: String?

        func run() async throws {
            try await options.withAuthenticators { _, authenticators in
                try await authenticators.deregister(keyIDs: keyID.map { [$0] })
                print(keyID.map { "Removed \($0)." } ?? "Removed every authenticator.")
            }
        }
    }

    struct ChangePIN: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "change-pin", abstract: "Change the PIN: the old one is proved to the provider first.")
        @OptionGroup var options: AuthenticatorOptionsGroup
        @Option(name: .customLong("new-pin"), help: "The new PIN (else the second line of standard input with --pin-stdin, or asked for).")
        var newPIN: String?

        func run() async throws {
            let old = try options.readPIN(prompt: "Current PIN")
            let new = try newPIN ?? options.readPIN(prompt: "New PIN", second: true)
            try await options.withAuthenticators { _, authenticators in
                guard let pinAuthenticator = try await authenticators.registered().first(where: { $0.pin != nil }) else {
                    throw ValidationError("no PIN authenticator on this installation")
                }
                do {
                    try await authenticators.changePIN(keyID: pinAuthenticator.keyID, old: old, new: new)
                    print("PIN changed.")
                } catch let error as SignetClientError {
                    print(AuthenticatorApp.explain(error))
                    throw ExitCode(4)
                }
            }
        }
    }

    static func describe(_ status: PINStatus) -> String {
        switch status {
        case .unlocked: return "unlocked"
        case .lastAttemptFailed(let remaining, let coolDown):
            return "last attempt failed: \(remaining) tries left" + (coolDown > 0 ? ", wait \(Int(coolDown.rounded(.up))) s" : "")
        case .lockedOut: return "locked out"
        }
    }

    /// A sentence for the refusals a user can act on.
    static func explain(_ error: SignetClientError) -> String {
        switch error.code {
        case .wrongPIN:
            return "Wrong PIN: \(error.attemptsLeft.map(String.init) ?? "?") tries left"
                + (error.retryAfter.map { ", wait \($0) s before the next." } ?? ".")
        case .pinCoolingDown: return "Too many wrong PINs: wait \(error.retryAfter.map(String.init) ?? "?") s; the PIN was not checked."
        case .pinLockedOut: return "Too many wrong PINs: the PIN authenticator was removed. Enroll again."
        case .authenticatorNotRegistered, .authenticatorInvalidated, .authenticatorRevoked:
            return "\(error.errorDescription ?? error.description) (signet authenticator enroll)"
        default: return error.errorDescription ?? error.description
        }
    }
}

/// The installation, the facet and how the PIN is given.
struct AuthenticatorOptionsGroup: ParsableArguments {
    @OptionGroup var installation: InstallationOptions
    @Option(
        name: .customLong("facet-id"),
        help: "The app's facet id, which the client must trust. Default: demo.json's, else ios:bundle-id:dev.signet.demo.app")
    var facetID: String?
    @Option(help: "The PIN (visible to other users of this machine; prefer --pin-stdin).") var pin: String?
    @Flag(help: "Read the PIN (and for change-pin the new PIN) from standard input, one a line, after the password if --password-stdin.")
    var pinStdin = false
    @Option(help: .hidden) var pinRounds: Int?

    func readPIN(prompt: String, second: Bool = false) throws -> String {
        if let pin, !second { return pin }
        if !pinStdin { FileHandle.standardError.write(Data("\(prompt): ".utf8)) }
        guard let line = readLine(strippingNewline: true), !line.isEmpty else { throw ValidationError("no PIN given (--pin or --pin-stdin)") }
        return line
    }

    func withAuthenticators<Result: Sendable>(_ body: (Installation, DeviceAuthenticators) async throws -> Result) async throws -> Result {
        let facet = facetID ?? installation.demoFacetID ?? "ios:bundle-id:dev.signet.demo.app"
        let store = try installation.authenticatorKeyStore()
        let rounds = pinRounds ?? PINKeyDerivation.defaultRounds
        return try await installation.withInstallation { current in
            try await body(current, current.enrolment.authenticators(keyStore: store, facetID: facet, pinRounds: rounds))
        }
    }
}
