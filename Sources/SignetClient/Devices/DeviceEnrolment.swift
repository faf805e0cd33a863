// The device API of the SDK: instance ids, activation, status, reactivation, deactivation, the user's list.
import Foundation
import SignetCore

/// The installation's identity with the provider: its device key, its certificate from Signet's
/// device CA, and the calls that get, check, renew and give it up (docs/devices.md).
///
/// Activation, in order:
/// 1. ``instanceID()`` asks for an instance id;
/// 2. the user logs in with it as the nonce and the scope `device`
///    (``authorizationRequest(for:scope:acrValues:loginHint:prompt:)``,
///    ``authorizationParameters(for:scope:acrValues:uiLocales:)`` for the native login);
/// 3. ``issueCertificate(accessToken:name:platform:)`` makes a key, sends its CSR with the
///    login's access token, and keeps the certificate chain.
///
/// Afterwards ``status()``, ``reactivate(accessToken:name:platform:)`` and ``deactivate()`` go
/// over mutual TLS presenting the certificate (``MutualTLSTransportFactory``); the self-service
/// calls (``devices(accessToken:)``, ``rename(_:to:accessToken:)``, ``remove(_:accessToken:)``,
/// ``lock(_:accessToken:)``) send the access token, over mutual TLS too once the device holds a
/// certificate, since tokens obtained with it are bound to it (RFC 8705 §3).
///
/// Access tokens go as `Bearer`, or as `DPoP` with a proof when the client proves a DPoP key
/// (its tokens are then DPoP-bound). Errors are ``SignetClientError``s; the provider's own
/// (`device_revoked`, `invalid_device_certificate`, …, see ``DeviceServerError``) are kept in
/// ``SignetClientError/serverError``.
public struct DeviceEnrolment: Sendable {
    /// The client whose issuer, client id, transport and DPoP key the calls use.
    public let client: SignetClient
    /// Where the device key and its chain are kept.
    public let keyStore: any DeviceKeyStore
    /// How a request presents the device certificate.
    public let mutualTLS: any MutualTLSTransportFactory

    public init(client: SignetClient, keyStore: any DeviceKeyStore, mutualTLS: any MutualTLSTransportFactory) {
        self.client = client
        self.keyStore = keyStore
        self.mutualTLS = mutualTLS
    }

    /// The kept device key and certificate chain, or `nil` before activation.
    public func credential() async throws -> DeviceCredential? {
        try await store { try await keyStore.load() }
    }

    // MARK: plumbing

    /// `issuer + path`, the issuer checked to be https (or http on loopback).
    func endpoint(_ path: String) throws -> String {
        try SignetClient.requireSecure(client.configuration.issuer, name: "the issuer")
        return client.configuration.issuer + path
    }

    /// The token type the client's tokens have: `DPoP` when it proves a key, else `Bearer`.
    var tokenType: String { client.usesDPoP ? "DPoP" : "Bearer" }

    /// Sends `request` through the client's transport, or presenting `credential` when there is one.
    func send(_ request: HTTPTransportRequest, presenting credential: DeviceCredential?, accessToken: String? = nil) async throws
        -> HTTPTransportResponse
    {
        func send(via transport: any HTTPTransport) async throws -> HTTPTransportResponse {
            guard let accessToken else { return try await client.send(request, via: transport) }
            return try await client.send(request, accessToken: accessToken, tokenType: tokenType, via: transport)
        }
        guard let credential else { return try await send(via: client.transport) }
        do {
            return try await mutualTLS.withTransport(presenting: credential) { try await send(via: $0) }
        } catch {
            throw SignetClientError.wrap(error)
        }
    }

    /// The body of a successful answer as `Body`; an error answer as ``SignetClientError``.
    func decode<Body: Decodable>(_ type: Body.Type, from response: HTTPTransportResponse) throws -> Body {
        guard response.isSuccess else { throw SignetClientError.from(response) }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        do { return try decoder.decode(Body.self, from: response.body) } catch {
            throw SignetClientError(
                .invalidResponse, status: response.status, isRetryable: false, reason: "the device endpoint's answer is not the documented JSON",
                underlying: error)
        }
    }

    /// Runs a key-store call, its failures as ``SignetClientError/Code/deviceKeyUnavailable``.
    func store<Value>(_ call: () async throws -> Value) async throws -> Value {
        do { return try await call() } catch let error as SignetClientError { throw error } catch {
            throw SignetClientError(.deviceKeyUnavailable, isRetryable: false, underlying: error)
        }
    }

    static func json(_ body: some Encodable) throws -> Data {
        do { return try JSONEncoder().encode(body) } catch {
            throw SignetClientError(.misuse, isRetryable: false, reason: "the request body could not be encoded", underlying: error)
        }
    }

    static let jsonHeaders: [(name: String, value: String)] = [("Content-Type", "application/json"), ("Accept", "application/json")]
}

extension SignetClient {
    /// The device API (``DeviceEnrolment``) for this client.
    ///
    /// - Parameters:
    ///   - keyStore: where the device key and its certificate chain are kept
    ///     (``SecureEnclaveDeviceKeyStore`` on Apple platforms, ``SoftwareDeviceKeyStore`` elsewhere).
    ///   - mutualTLS: how requests present the certificate (``URLSessionMutualTLSTransportFactory``
    ///     on Apple platforms, `SignetClientNIO`'s `NIOMutualTLSTransportFactory` elsewhere).
    public func devices(keyStore: any DeviceKeyStore, mutualTLS: any MutualTLSTransportFactory) -> DeviceEnrolment {
        DeviceEnrolment(client: self, keyStore: keyStore, mutualTLS: mutualTLS)
    }
}
