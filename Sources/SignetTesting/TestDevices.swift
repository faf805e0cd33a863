// App installations in tests: a device key, its certificate, and a browser that presents them.
import Crypto
import Foundation
import SignetCore
import SignetScript
import SignetServer
import X509

/// An activated installation in a test: its key, certificate chain and a browser presenting them over mutual TLS.
public struct TestDevice: Sendable {
    public let instanceID: String
    public let key: P256.Signing.PrivateKey
    /// The certificate chain in PEM, the device's certificate first.
    public let chain: [String]
    /// Presents the device certificate (needs a provider with `tls: true`).
    public let browser: ScriptedBrowser
    /// The access token of the login that activated it (unbound: issued before the certificate).
    public var activationAccessToken: String? = nil

    public var certificate: Certificate { get throws { try Certificate(pemEncoded: chain[0]) } }
    /// RFC 8705 `x5t#S256` of the certificate.
    public var thumbprint: String { get throws { try DeviceCertificateAuthority.x5tS256(of: try certificate) } }

    /// A PEM PKCS#10 request for `key`.
    public static func csr(_ key: P256.Signing.PrivateKey) throws -> String {
        try CertificateSigningRequest(
            version: .v1, subject: try DistinguishedName { CommonName("my phone") }, privateKey: Certificate.PrivateKey(key),
            attributes: CertificateSigningRequest.Attributes(), signatureAlgorithm: .ecdsaWithSHA256
        ).serializeAsPEM().pemString
    }
}

extension TestProvider {
    /// Activates a new installation of a public client allowed the scope `device`: an instance
    /// id, a hosted-page login with it as the nonce, and the activation with a fresh key.
    public func activateDevice(clientID: String, redirectURI: String, username: String, password: String, name: String? = nil) async throws
        -> TestDevice
    {
        let instances = try await ScriptedBrowser().post(url("/devices/instances"), form: [("client_id", clientID)])
        guard instances.status == 201, let instanceID = instances.json["instance_id"] as? String else {
            throw SignetError(.malformedMessage, "no instance id: \(instances.status) \(instances.body.prefix(300))")
        }
        var authorization = TestAuthorization(clientID: clientID, redirectURI: redirectURI, scope: "openid device")
        authorization.nonce = instanceID
        let code = try await signIn(authorization, username: username, password: password)
        let token = try await redeem(code, authorization, clientAuth: [("client_id", clientID)]).decode(TokenResponse.self).accessToken
        let key = P256.Signing.PrivateKey()
        var body = ["csr": try TestDevice.csr(key), "platform": "ios"]
        body["name"] = name
        let answer = try await ScriptedBrowser().send(
            "POST", url("/devices/activation"), body: String(decoding: try JSONEncoder().encode(body), as: UTF8.self),
            headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")])
        guard answer.status == 201, let chain = answer.json["certificate_chain"] as? [String] else {
            throw SignetError(.malformedMessage, "activation failed: \(answer.status) \(answer.body.prefix(300))")
        }
        return TestDevice(
            instanceID: instanceID, key: key, chain: chain, browser: ScriptedBrowser(tls: try TestTLS.client(presenting: chain, key: key)),
            activationAccessToken: token)
    }
}
