// Every request of an activated installation over mutual TLS, so its tokens are bound to the device.
import Foundation
import SignetCore

/// Sends each request presenting the installation's device certificate whenever the key store
/// holds one that has not expired, and through `fallback` otherwise.
///
/// The provider binds tokens to a device only when the token request arrives with its
/// certificate (RFC 8705 §3): a code exchanged or a token refreshed without it gives plain
/// bearer tokens that a lost-device lock cannot end, and a grant already tied to the device is
/// refused without it. A client built on this transport (``DeviceEnrolment/boundClient``) sends
/// the token endpoint, `/userinfo`, the native login and resource calls over mutual TLS once the
/// device is activated, and over the ordinary transport before.
///
/// Each request runs in its own ``MutualTLSTransportFactory/withTransport(presenting:_:)`` scope,
/// so a certificate replaced by a reactivation is never presented again.
public struct DeviceBoundTransport: HTTPTransport {
    /// Where the device key and its chain are kept.
    public let keyStore: any DeviceKeyStore
    /// How a request presents the certificate.
    public let mutualTLS: any MutualTLSTransportFactory
    /// The transport before activation, or when the certificate has expired.
    public let fallback: any HTTPTransport
    let now: @Sendable () -> Date

    public init(
        keyStore: any DeviceKeyStore, mutualTLS: any MutualTLSTransportFactory, fallback: any HTTPTransport,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.keyStore = keyStore
        self.mutualTLS = mutualTLS
        self.fallback = fallback
        self.now = now
    }

    public func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        // A store that cannot be read is an error, never a silent request without the certificate
        // (which would give the app unbound tokens a lock cannot end).
        let stored: DeviceCredential?
        do { stored = try await keyStore.load() } catch let error as SignetClientError { throw error } catch {
            throw SignetClientError(.deviceKeyUnavailable, isRetryable: false, underlying: error)
        }
        if let credential = stored, credential.notValidAfter > now() {
            return try await mutualTLS.withTransport(presenting: credential) { try await $0.send(request) }
        }
        return try await fallback.send(request)
    }
}

extension DeviceEnrolment {
    /// The same app's client, its requests sent through a ``DeviceBoundTransport`` on this
    /// enrolment's key store: once the device is activated, its logins, code exchanges, refreshes
    /// and calls present the certificate, so their tokens are bound to the device and end with a
    /// lock. Use it (or an `AuthState` over it) for everything after activation.
    public var boundClient: SignetClient {
        var bound = client
        bound.transport = DeviceBoundTransport(keyStore: keyStore, mutualTLS: mutualTLS, fallback: client.transport, now: client.now)
        return bound
    }
}
