// `signet demo --device`: activation → a call over mutual TLS → reactivation → lock → refused.
import Crypto
import Foundation
import SignetClient
import SignetCore
import SignetScript
import SwiftASN1
import X509

/// The device demo's steps, in order, as an app installation using SignetClient would take them.
struct DeviceDemoScript {
    let installation: Installation
    let narrator: Narrator
    /// The app's facet id, which the demo app's registration trusts.
    let facetID: String
    /// The demo's authenticators live in memory: the demo forgets them when it ends.
    let authenticators = MemoryAuthenticatorKeyStore()
    static let pin = "2580"

    var enrolment: DeviceEnrolment { installation.enrolment }
    var issuer: String { installation.client.configuration.issuer }

    func run() async throws {
        guard issuer.lowercased().hasPrefix("https://") else {
            throw failure("devices speak mutual TLS: start the provider with `signet serve --dev-tls` (or TLS of its own), then run this again")
        }
        _ = try await enrolment.deactivate()  // a folder left by an earlier run

        let instance = try await enrolment.instanceID()
        narrator.step("The app asked for an instance id (POST /devices/instances)", "\(instance.id.prefix(12))…, valid \(instance.expiresIn) s")

        let parameters = enrolment.authorizationParameters(for: instance)
        let login = try await installation.logIn(parameters, via: installation.client)
        guard let claims = login.idToken.flatMap(IDTokenClaims.unverified), claims.instanceID == instance.id else {
            throw failure("the ID token does not carry the instance id")
        }
        narrator.step(
            "\(installation.username) logged in with the instance id as the nonce and the scope device",
            "ID token instance_id \(instance.id.prefix(12))…")

        let activated = try await enrolment.issueCertificate(accessToken: login.accessToken, name: "Demo device")
        guard let credential = try await enrolment.credential() else { throw failure("the key store kept nothing") }
        narrator.step(
            "Activated: a P-256 key made here, its CSR signed, a client certificate issued (POST /devices/activation)",
            "\(credential.certificate.subject) · serial \(activated.certificateSerial ?? "-") · until \(Self.date(credential.notValidAfter))")

        guard case .activated(let status) = try await enrolment.status() else { throw failure("the provider does not see an activated device") }
        narrator.step("GET /devices/status over mutual TLS", "activated, reactivation due from \(status.reactivationDueAt.map(Self.date) ?? "-")")

        let bound = try await installation.logIn(enrolment.boundClient.nativeLoginParameters(), via: enrolment.boundClient)
        let thumbprint = try Self.thumbprint(credential.certificate)
        guard AccessTokenClaims.unverified(bound.accessToken)?.cnf?.x5tS256 == thumbprint else {
            throw failure("the token obtained over mutual TLS is not bound to the certificate")
        }
        narrator.step(
            "A login through the bound client (mutual TLS once activated): its access token is bound to the certificate (RFC 8705 cnf)",
            "x5t#S256 \(thumbprint)")

        let withCertificate = try await userInfo(bound.accessToken, via: enrolment.boundClient)
        let withoutCertificate = try await userInfo(bound.accessToken, via: installation.client)
        guard withCertificate == 200, withoutCertificate == 401 else {
            throw failure("/userinfo answered \(withCertificate) with the certificate and \(withoutCertificate) without it")
        }
        narrator.step("/userinfo with the certificate: 200; the same token without it: 401")

        let pinKeyID = try await authenticatorSteps()

        let renewed = try await installation.reactivate()
        guard let replacement = try await enrolment.credential(), replacement.instanceID == renewed.instanceID else {
            throw failure("the key store does not hold the new certificate")
        }
        let oldStatus = try await statusCode(presenting: credential)
        guard oldStatus.status == 401, oldStatus.error == DeviceServerError.revoked.rawValue else {
            throw failure("the replaced certificate still answers \(oldStatus.status)")
        }
        narrator.step(
            "Reactivated: new instance id, new key, new certificate (POST /devices/reactivation)",
            "\(renewed.instanceID.prefix(12))…; the old certificate is refused (\(oldStatus.error ?? "-"))")

        let boundToNew = try await installation.logIn(enrolment.boundClient.nativeLoginParameters(), via: enrolment.boundClient)
        try await wrongPINs(pinKeyID)
        let other = try await installation.logIn(installation.client.nativeLoginParameters(), via: installation.client)
        let locked = try await enrolment.lock(renewed.instanceID, accessToken: other.accessToken)
        narrator.step("The phone is lost: locked from a login elsewhere (POST /devices/{id}/lock)", "status \(locked.status.rawValue)")
        do {
            _ = try await uaf.login.challenge(for: DeviceLoginInput(parameters: installation.client.nativeLoginParameters()))
            throw failure("the locked device could still start a device login")
        } catch let error as SignetClientError where error.serverError?.error == .deviceRevoked {
            narrator.step("Device login refused: the locked device's certificate is revoked (device_revoked)")
        }

        guard case .revoked(let reason) = try await enrolment.status() else { throw failure("the locked device is still activated") }
        let afterLock = try await userInfo(boundToNew.accessToken, via: enrolment.boundClient)
        guard afterLock == 401 else { throw failure("/userinfo still answers \(afterLock) after the lock") }
        do {
            _ = try await enrolment.boundClient.refresh(boundToNew.refreshToken ?? "")
            throw failure("the locked device's refresh token still works")
        } catch let error as SignetClientError where error.serverError?.error == .invalidGrant {}
        narrator.step("Refused: status says revoked (\(reason ?? "-")), /userinfo 401, refresh invalid_grant")

        guard case .alreadyRevoked = try await enrolment.deactivate() else {
            throw failure("deactivating the locked device did not say it was revoked")
        }
        narrator.step("The app deletes its key (POST /devices/deactivation answers device_revoked)")
    }

    var uaf: DeviceAuthenticators { enrolment.authenticators(keyStore: authenticators, facetID: facetID) }

    /// PIN enrolment and a passwordless device login; the PIN authenticator's KeyID.
    func authenticatorSteps() async throws -> String {
        let fresh = try await installation.logIn(
            enrolment.boundClient.nativeLoginParameters(acrValues: "urn:signet:loa:2"), via: enrolment.boundClient)
        let registered = try await uaf.register(aaid: "F1D0#1001", pin: Self.pin, accessToken: fresh.accessToken)
        narrator.step(
            "A PIN authenticator registered (FIDO UAF, POST /uaf/registration/…): its key signs, and a key derived from the PIN proves the PIN to the provider",
            "\(registered.aaid) iOS PIN, KeyID \(registered.keyID.prefix(12))…")
        let tokens = try await deviceLogin(pin: Self.pin)
        let claims = tokens.idTokenClaims
        narrator.step(
            "Device login without a password (POST /login/device/start → UAF assertion → /login/device/finish → /token)",
            "acr \(claims?.acr ?? "-"), amr \(claims?.amr?.joined(separator: " ") ?? "-")")
        return registered.keyID
    }

    /// Three wrong PINs: the provider counts them and starts the cool-down at the third.
    func wrongPINs(_ keyID: String) async throws {
        var answers: [String] = []
        for guess in ["0000", "1111", "2222"] {
            do {
                _ = try await deviceLogin(pin: guess)
                throw failure("a wrong PIN logged in")
            } catch let error as SignetClientError where error.code == .wrongPIN {
                answers.append("\(error.attemptsLeft ?? 0) left" + (error.retryAfter.map { ", wait \($0) s" } ?? ""))
            }
        }
        do {
            _ = try await deviceLogin(pin: Self.pin)
            throw failure("the right PIN was checked during the cool-down")
        } catch let error as SignetClientError where error.code == .pinCoolingDown {
            answers.append("then even the right PIN waits \(error.retryAfter ?? 0) s")
        }
        guard case .lastAttemptFailed = try await uaf.pinStatus(keyID: keyID) else { throw failure("the app does not know the PIN failed") }
        narrator.step("Three wrong PINs, counted by the provider (the phone cannot test guesses offline)", answers.joined(separator: "; "))
    }

    /// A device login with the PIN, its tokens redeemed over mutual TLS.
    func deviceLogin(pin: String) async throws -> AuthTokens {
        let challenge = try await uaf.login.challenge(for: DeviceLoginInput(parameters: installation.client.nativeLoginParameters()))
        return try await uaf.login.verify(challenge, pin: pin).exchangeForTokens()
    }

    /// The status of `GET /userinfo` with `accessToken` through `client`.
    func userInfo(_ accessToken: String, via client: SignetClient) async throws -> Int {
        try await client.send(HTTPTransportRequest(method: "GET", url: issuer + "/userinfo"), accessToken: accessToken, tokenType: "Bearer").status
    }

    /// `GET /devices/status` presenting `credential`: the status and the `error`.
    func statusCode(presenting credential: DeviceCredential) async throws -> (status: Int, error: String?) {
        let response = try await enrolment.mutualTLS.withTransport(presenting: credential) { transport in
            try await transport.send(HTTPTransportRequest(method: "GET", url: issuer + "/devices/status"))
        }
        let error = (try? JSONDecoder().decode(OAuthError.self, from: response.body))?.error.rawValue
        return (response.status, error)
    }

    /// RFC 8705 `x5t#S256`: the base64url SHA-256 of the certificate's DER.
    static func thumbprint(_ certificate: Certificate) throws -> String {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return Data(SHA256.hash(data: serializer.serializedBytes)).base64URLEncodedString()
    }

    static func date(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }

    func failure(_ reason: String) -> SignetError { SignetError(.malformedMessage, reason) }
}
