// `signet demo --device`: activation → a call over mutual TLS → reactivation → lock → refused.
import Crypto
import Foundation
import SignetClient
import SignetCore
import SwiftASN1
import X509

/// The device demo's steps, in order, as an app installation using SignetClient would take them.
struct DeviceDemoScript {
    let installation: Installation
    let narrator: Narrator

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
        narrator.step("\(installation.username) logged in with the instance id as the nonce and the scope device", "ID token instance_id \(instance.id.prefix(12))…")

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
        narrator.step("A login through the bound client (mutual TLS once activated): its access token is bound to the certificate (RFC 8705 cnf)", "x5t#S256 \(thumbprint)")

        let withCertificate = try await userInfo(bound.accessToken, via: enrolment.boundClient)
        let withoutCertificate = try await userInfo(bound.accessToken, via: installation.client)
        guard withCertificate == 200, withoutCertificate == 401 else {
            throw failure("/userinfo answered \(withCertificate) with the certificate and \(withoutCertificate) without it")
        }
        narrator.step("/userinfo with the certificate: 200; the same token without it: 401")

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
        let other = try await installation.logIn(installation.client.nativeLoginParameters(), via: installation.client)
        let locked = try await enrolment.lock(renewed.instanceID, accessToken: other.accessToken)
        narrator.step("The phone is lost: locked from a login elsewhere (POST /devices/{id}/lock)", "status \(locked.status.rawValue)")

        guard case .revoked(let reason) = try await enrolment.status() else { throw failure("the locked device is still activated") }
        let afterLock = try await userInfo(boundToNew.accessToken, via: enrolment.boundClient)
        guard afterLock == 401 else { throw failure("/userinfo still answers \(afterLock) after the lock") }
        do {
            _ = try await enrolment.boundClient.refresh(boundToNew.refreshToken ?? "")
            throw failure("the locked device's refresh token still works")
        } catch let error as SignetClientError where error.serverError?.error == .invalidGrant {}
        narrator.step("Refused: status says revoked (\(reason ?? "-")), /userinfo 401, refresh invalid_grant")

        guard case .alreadyRevoked = try await enrolment.deactivate() else { throw failure("deactivating the locked device did not say it was revoked") }
        narrator.step("The app deletes its key (POST /devices/deactivation answers device_revoked)")
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

extension SignetClient {
    /// Fresh parameters for a native login of this client.
    func nativeLoginParameters(scope: String = "openid") -> AuthorizationParameters {
        AuthorizationParameters(clientID: configuration.clientID, redirectURI: configuration.redirectURI, scope: scope)
    }
}
