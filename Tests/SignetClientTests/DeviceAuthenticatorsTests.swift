// The SDK's authenticators against a real provider over mutual TLS: registration, device login,
// the PIN schedule, and seed 002's five key-revocation scenarios.
import Crypto
import Foundation
import SignetClient
import SignetClientNIO
import SignetCore
import SignetServer
import SignetTesting
import Testing

@Suite("SDK authenticators: register, device login, PIN, and the five ways a key is revoked")
struct DeviceAuthenticatorsTests {
    static let redirect = "dev.signet.wallet:/callback"
    static let facet = "ios:bundle-id:dev.signet.wallet"
    static let password = "correct horse battery staple"

    /// An activated phone: the SDK's authenticators over mutual TLS, and a fresh bound login token.
    struct Phone {
        let authenticators: DeviceAuthenticators
        let keyStore: MemoryAuthenticatorKeyStore
        let token: String
        let client: SignetClient
    }

    func withPhone(clock: TestClock = TestClock(), _ body: (TestProvider, Phone) async throws -> Void) async throws {
        try await withTestProvider(clock: clock, tls: true) { provider in
            var wallet = SignetAdmin.NewClient(id: "wallet", name: "Wallet", authMethod: .none, redirectURIs: [Self.redirect])
            wallet.apiScopes = ["device"]
            wallet.nativeLogin = true
            wallet.facetIDs = [Self.facet]
            _ = try await provider.admin.addClient(wallet)
            _ = try await provider.admin.addUser(username: "erin", password: Self.password, phoneNumber: "+4522222222")
            let device = try await provider.activateDevice(clientID: "wallet", redirectURI: Self.redirect, username: "erin", password: Self.password)
            let login = TestAuthorization(clientID: "wallet", redirectURI: Self.redirect, scope: "openid")
            let code = try await provider.signInTwoFactor(login, username: "erin", password: Self.password)
            let token = try await provider.redeem(code, login, clientAuth: [("client_id", "wallet")], browser: device.browser).decode(
                TokenResponse.self
            ).accessToken

            let deviceKeys = MemoryDeviceKeyStore()
            try await deviceKeys.save(SoftwareDeviceKey(key: device.key), certificateChain: device.chain)
            let roots = [try String(contentsOfFile: try #require(provider.configuration.tlsCertificatePath), encoding: .utf8)]
            try await NIOHTTPTransport.withTransport(presenting: nil, additionalTrustRoots: roots) { transport in
                let client = SignetClient(
                    configuration: .init(issuer: provider.issuer, clientID: "wallet", redirectURI: Self.redirect), transport: transport,
                    now: { clock.now })
                let enrolment = client.devices(keyStore: deviceKeys, mutualTLS: NIOMutualTLSTransportFactory(additionalTrustRoots: roots))
                let keyStore = MemoryAuthenticatorKeyStore()
                let phone = Phone(
                    authenticators: enrolment.authenticators(keyStore: keyStore, facetID: Self.facet, pinRounds: 1000), keyStore: keyStore,
                    token: token,
                    client: client)
                try await body(provider, phone)
            }
        }
    }

    func login(_ phone: Phone, pin: String? = nil, keyID: String? = nil) async throws -> AuthTokens {
        let parameters = AuthorizationParameters(clientID: "wallet", redirectURI: Self.redirect)
        let challenge = try await phone.authenticators.login.challenge(for: DeviceLoginInput(parameters: parameters))
        return try await phone.authenticators.login.verify(challenge, keyID: keyID, pin: pin).exchangeForTokens()
    }

    func code(_ error: any Error) -> SignetClientError.Code? { (error as? SignetClientError)?.code }

    @Test(
        "register a PIN authenticator, log in with it (acr loa:2, amr swk pin mfa), and get wrong PINs counted with the cool-down the provider says")
    func pinLogin() async throws {
        let clock = TestClock()
        try await withPhone(clock: clock) { provider, phone in
            let stored = try await phone.authenticators.register(aaid: "F1D0#1001", pin: "1234", accessToken: phone.token)
            #expect(stored.pin != nil)
            #expect(try await phone.authenticators.pinStatus(keyID: stored.keyID) == .unlocked)
            let tokens = try await login(phone, pin: "1234")
            #expect(tokens.idTokenClaims?.acr == "urn:signet:loa:2")
            #expect(tokens.idTokenClaims?.amr == ["swk", "pin", "mfa"])
            #expect(await phone.keyStore.all().first?.signCounter == 1, "the counter grows with each use")

            for (guess, left) in [("0000", 4), ("1111", 3)] {
                do {
                    _ = try await login(phone, pin: guess)
                    Issue.record("a wrong PIN logged in")
                } catch let error as SignetClientError {
                    #expect(error.code == .wrongPIN)
                    #expect(error.attemptsLeft == left)
                    #expect(error.isRetryable, "a wrong PIN may be tried again (with the right one)")
                }
            }
            do {
                _ = try await login(phone, pin: "2222")
            } catch let error as SignetClientError {
                #expect(error.code == .wrongPIN)
                #expect(error.retryAfter == 60)
            }
            #expect(try await phone.authenticators.pinStatus(keyID: stored.keyID) == .lastAttemptFailed(remaining: 2, coolDown: 60))
            // The app refuses at once during the cool-down, without asking the provider.
            await #expect(throws: SignetClientError(.pinCoolingDown, isRetryable: true, retryAfter: 60)) { _ = try await login(phone, pin: "1234") }
            clock.advance(by: 61)
            _ = try await login(phone, pin: "1234")
            #expect(try await phone.authenticators.pinStatus(keyID: stored.keyID) == .unlocked, "a right PIN resets the schedule")
        }
    }

    @Test("revocation 1: deregistration (here, or by the user elsewhere) ends in authenticator_not_registered, and registering again works")
    func deregistration() async throws {
        try await withPhone { provider, phone in
            let stored = try await phone.authenticators.register(aaid: "F1D0#1001", pin: "1234", accessToken: phone.token)
            try await phone.authenticators.deregister(keyIDs: [stored.keyID])
            #expect(try await phone.authenticators.registered().isEmpty)
            await #expect { _ = try await login(phone, pin: "1234") } throws: { code($0) == .authenticatorNotRegistered }
            // Removed on the provider behind the app's back (helpdesk): the app learns it at the next login.
            let again = try await phone.authenticators.register(aaid: "F1D0#1001", pin: "1234", accessToken: phone.token)
            let user = try #require(try await provider.store.user(username: "erin"))
            let record = try #require(try await provider.store.authenticator(userID: user.id, keyID: again.keyID))
            _ = try await provider.store.deleteAuthenticator(id: record.id)
            await #expect { _ = try await login(phone, pin: "1234") } throws: { code($0) == .authenticatorNotRegistered }
            #expect(try await phone.authenticators.registered().isEmpty, "the stale authenticator is forgotten")
            _ = try await phone.authenticators.register(aaid: "F1D0#1001", pin: "5678", accessToken: phone.token)
            _ = try await login(phone, pin: "5678")
        }
    }

    @Test("revocation 2: the fifth wrong PIN removes the PIN authenticator on both sides: pin_locked_out, then register again")
    func pinLockOut() async throws {
        let clock = TestClock()
        try await withPhone(clock: clock) { provider, phone in
            let stored = try await phone.authenticators.register(aaid: "F1D0#1001", pin: "1234", accessToken: phone.token)
            var last: SignetClientError.Code?
            // Waiting out each cool-down (60 s after the 3rd, 180 s after the 4th), within the token's life.
            for (guess, wait) in [("1", 0.0), ("2", 0), ("3", 0), ("4", 61), ("5", 181)] {
                clock.advance(by: wait)
                do { _ = try await login(phone, pin: guess) } catch { last = code(error) }
            }
            #expect(last == .pinLockedOut)
            #expect(try await phone.authenticators.registered().isEmpty)
            #expect(try await provider.store.authenticators(userID: try #require(try await provider.store.user(username: "erin")).id).isEmpty)
            #expect(try await phone.authenticators.pinStatus(keyID: stored.keyID) == .lockedOut)
            _ = try await phone.authenticators.register(aaid: "F1D0#1001", pin: "2468", accessToken: phone.token)
            _ = try await login(phone, pin: "2468")
        }
    }

    @Test(
        "revocations 3, 4, 5: the OS wipes the key (iOS lock screen removed, Android passcode removed, new biometrics): authenticator_invalidated, forgotten on both sides, register again",
        arguments: ["F1D0#1003", "F1D0#0004", "F1D0#1002"])
    func invalidated(_ aaid: String) async throws {
        try await withPhone { provider, phone in
            let stored = try await phone.authenticators.register(
                aaid: aaid, options: AuthenticatorOptions(invalidateOnNewOsBiometrics: true), accessToken: phone.token)
            #expect(stored.der == aaid.hasPrefix("F1D0#1"), "iOS authenticators send DER, Android raw")
            _ = try await login(phone)
            await phone.keyStore.invalidate(keyID: stored.keyID)
            await #expect { _ = try await login(phone) } throws: { code($0) == .authenticatorInvalidated }
            #expect(try await phone.authenticators.registered().isEmpty)
            #expect(
                try await provider.store.authenticators(userID: try #require(try await provider.store.user(username: "erin")).id).isEmpty,
                "deregistered on the provider too")
            _ = try await phone.authenticators.register(aaid: aaid, accessToken: phone.token)
            _ = try await login(phone)
        }
    }

    @Test("change the PIN: a wrong old PIN is counted; the right one sets the new PIN")
    func changePIN() async throws {
        try await withPhone { _, phone in
            let stored = try await phone.authenticators.register(aaid: "F1D0#1001", pin: "1234", accessToken: phone.token)
            await #expect { try await phone.authenticators.changePIN(keyID: stored.keyID, old: "9999", new: "4321") } throws: {
                code($0) == .wrongPIN
            }
            try await phone.authenticators.changePIN(keyID: stored.keyID, old: "1234", new: "4321")
            _ = try await login(phone, pin: "4321")
            await #expect { _ = try await login(phone, pin: "1234") } throws: { code($0) == .wrongPIN }
        }
    }

    @Test("misuse is refused before anything is sent: a PIN for a biometric, none for a PIN authenticator, an unknown AAID")
    func misuse() async throws {
        try await withPhone { _, phone in
            await #expect { _ = try await phone.authenticators.register(aaid: "F1D0#1002", pin: "1234", accessToken: phone.token) } throws: {
                code($0) == .misuse
            }
            await #expect { _ = try await phone.authenticators.register(aaid: "F1D0#1001", accessToken: phone.token) } throws: { code($0) == .misuse }
            await #expect { _ = try await phone.authenticators.register(aaid: "F1D0#9999", accessToken: phone.token) } throws: { code($0) == .misuse }
            let kept = try await phone.authenticators.registered()
            #expect(kept.isEmpty)
        }
    }
}
