// Mutual TLS with URLSession: answers the server's client-certificate challenge with the device identity.
//
// Not compiled on Linux CI: keep it small and change it on a Mac.
#if canImport(CryptoKit) && canImport(Security)
    import Foundation
    import Security
    import SignetCore

    /// Presents the device certificate of a ``SecureEnclaveDeviceKeyStore`` with `URLSession`.
    ///
    /// Each ``withTransport(presenting:_:)`` opens an ephemeral session whose delegate answers
    /// `NSURLAuthenticationMethodClientCertificate` with the Keychain identity (the Secure Enclave
    /// key and its certificate) and the chain's intermediates, and invalidates the session when the
    /// scope ends, so no connection is reused with a replaced certificate. Every other challenge
    /// (the server's certificate) gets the system's default handling.
    public struct URLSessionMutualTLSTransportFactory: MutualTLSTransportFactory {
        private let keyStore: SecureEnclaveDeviceKeyStore
        private let timeout: TimeInterval
        private let maximumResponseSize: Int

        public init(keyStore: SecureEnclaveDeviceKeyStore, timeout: TimeInterval = 15, maximumResponseSize: Int = 1 << 20) {
            self.keyStore = keyStore
            self.timeout = timeout
            self.maximumResponseSize = maximumResponseSize
        }

        public func withTransport<Result: Sendable>(
            presenting credential: DeviceCredential, _ body: (any HTTPTransport) async throws -> Result
        ) async throws -> Result {
            let identity = try await keyStore.identity(for: credential)
            let session = URLSession(configuration: .ephemeral, delegate: ClientCertificateDelegate(identity: identity), delegateQueue: nil)
            defer { session.finishTasksAndInvalidate() }
            return try await body(URLSessionTransport(session: session, timeout: timeout, maximumResponseSize: maximumResponseSize))
        }
    }

    /// Answers client-certificate challenges with one identity; leaves the rest to the system.
    final class ClientCertificateDelegate: NSObject, URLSessionTaskDelegate, Sendable {
        private let identity: KeychainDeviceIdentity

        init(identity: KeychainDeviceIdentity) { self.identity = identity }

        func urlSession(_ session: URLSession, didReceive challenge: URLAuthenticationChallenge) async -> (
            URLSession.AuthChallengeDisposition, URLCredential?
        ) {
            answer(challenge)
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge
        ) async -> (URLSession.AuthChallengeDisposition, URLCredential?) {
            answer(challenge)
        }

        private func answer(_ challenge: URLAuthenticationChallenge) -> (URLSession.AuthChallengeDisposition, URLCredential?) {
            guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodClientCertificate else {
                return (.performDefaultHandling, nil)
            }
            return (.useCredential, URLCredential(identity: identity.identity, certificates: identity.intermediates, persistence: .forSession))
        }
    }
#endif
