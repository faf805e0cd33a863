// Getting a device certificate: activation after a login, or an initial certificate before it.
import Foundation
import SignetCore

/// An initial certificate (valid minutes): it lets the first login run over mutual TLS but
/// authenticates no device endpoint.
public struct InitialCertificate: Sendable, Equatable {
    /// The instance id it names: the login's nonce, as with ``DeviceEnrolment/instanceID()``.
    public var instance: DeviceInstance
    /// expires_at — when the certificate expires.
    public var expiresAt: Date?
    /// attestation — the kind of attestation the provider recorded (`none` in development).
    public var attestation: String?

    public init(instance: DeviceInstance, expiresAt: Date?, attestation: String?) {
        self.instance = instance
        self.expiresAt = expiresAt
        self.attestation = attestation
    }
}

extension DeviceEnrolment {
    /// The longest device name the provider takes.
    public static let maximumNameLength = 64

    /// Activates the device: makes a key in the store, sends its CSR to `POST /devices/activation`
    /// with the access token of a device login (``authorizationRequest(for:scope:acrValues:loginHint:prompt:)``),
    /// and keeps the key with the certificate chain the provider answers.
    ///
    /// The key store is changed only when the provider has issued the certificate: a refused
    /// activation leaves whatever it held. When it holds an unexpired initial certificate
    /// (``initialCertificate(attestation:platform:)``), that key is certified and the request
    /// presents the initial certificate, so the device keeps the attestation judged for it.
    ///
    /// - Parameters:
    ///   - accessToken: the login's access token (scope `device`, nonce = the instance id); sent
    ///     as `Bearer`, or as `DPoP` with a proof when the client proves a DPoP key.
    ///   - name: what the user calls the device, at most 64 characters.
    ///   - platform: the kind of device (this one's by default).
    /// - Returns: the provider's record of the device.
    /// - Throws: `misuse` for a longer name; `server` with the provider's error (e.g. `invalid_token`,
    ///   `insufficient_scope`); `device_key_unavailable` when the key cannot be made, sign or be kept;
    ///   `response_mismatch` when the certificate names another key or instance than the record.
    @discardableResult
    public func issueCertificate(accessToken: String, name: String? = nil, platform: DevicePlatform = .current) async throws -> RegisteredDevice {
        try Self.check(name: name)
        // After an initial certificate its key is certified, over mutual TLS with it, so the
        // attestation the provider judged for that key carries over to the device.
        let initial = try await credential().flatMap { $0.isInitialCertificate && $0.notValidAfter > client.now() ? $0 : nil }
        let key: any DeviceKey
        if let initial { key = initial.key } else { key = try await store { try await keyStore.makeKey() } }
        let body = ActivationRequestBody(csr: try await DeviceCSR.make(for: key), name: name, platform: platform)
        let request = HTTPTransportRequest(
            method: "POST", url: try endpoint("/devices/activation"), headers: Self.jsonHeaders, body: try Self.json(body))
        let answer = try decode(ActivationAnswer.self, from: try await send(request, presenting: initial, accessToken: accessToken))
        try await keep(key, answer.certificateChain, instanceID: answer.device.instanceID)
        return answer.device
    }

    /// Gets an initial certificate before any login: makes a key, sends its CSR (and the
    /// platform's attestation) to `POST /devices/initial-certificate`, and keeps key and chain.
    ///
    /// Its ``InitialCertificate/instance`` is the instance id for the login that follows; the
    /// login may run over mutual TLS with the certificate; ``issueCertificate(accessToken:name:platform:)``
    /// then replaces it with the device certificate.
    ///
    /// - Parameters:
    ///   - attestation: the platform's evidence (App Attest, Play Integrity), sent base64url; `nil` for none.
    ///   - platform: the kind of device (this one's by default).
    public func initialCertificate(attestation: Data? = nil, platform: DevicePlatform = .current) async throws -> InitialCertificate {
        try await requestInitialCertificate(attestation: attestation, platform: platform, replacing: nil)
    }

    /// Swaps in a fresh initial certificate for the same instance id, mid-flow (the first one
    /// lasts minutes): a new key and CSR to `POST /devices/initial-certificate` with the
    /// `instance_id`, over mutual TLS presenting the current initial certificate.
    ///
    /// - Throws: `device_not_activated` when the store holds no certificate naming an instance.
    public func renewInitialCertificate(attestation: Data? = nil, platform: DevicePlatform = .current) async throws -> InitialCertificate {
        guard let current = try await credential(), current.instanceID != nil else {
            throw SignetClientError(.deviceNotActivated, isRetryable: false, reason: "there is no initial certificate to renew")
        }
        return try await requestInitialCertificate(attestation: attestation, platform: platform, replacing: current)
    }

    private func requestInitialCertificate(attestation: Data?, platform: DevicePlatform, replacing current: DeviceCredential?) async throws
        -> InitialCertificate
    {
        let key = try await store { try await keyStore.makeKey() }
        let body = InitialCertificateRequestBody(
            clientID: client.configuration.clientID, csr: try await DeviceCSR.make(for: key), attestation: attestation?.base64URLEncodedString(),
            platform: platform, instanceID: current?.instanceID)
        let request = HTTPTransportRequest(
            method: "POST", url: try endpoint("/devices/initial-certificate"), headers: Self.jsonHeaders, body: try Self.json(body))
        let answer = try decode(InitialCertificateAnswer.self, from: try await send(request, presenting: current))
        if let current, answer.instanceID != current.instanceID {
            throw SignetClientError(.responseMismatch, isRetryable: false, reason: "the renewed initial certificate is for another instance")
        }
        try await keep(key, answer.certificateChain, instanceID: answer.instanceID)
        let expiresIn = answer.expiresAt.map { max(0, Int($0.timeIntervalSince(client.now()))) } ?? 0
        return InitialCertificate(
            instance: DeviceInstance(id: answer.instanceID, expiresIn: expiresIn), expiresAt: answer.expiresAt, attestation: answer.attestation)
    }

    /// Keeps `key` with `chain` once the chain is seen to certify that key for `instanceID`.
    func keep(_ key: any DeviceKey, _ chain: CertificateChain, instanceID: String) async throws {
        let credential: DeviceCredential
        do { credential = try DeviceCredential(key: key, certificateChain: chain.certificates) } catch let error as SignetClientError {
            throw SignetClientError(.responseMismatch, isRetryable: false, reason: error.reason, underlying: error)
        }
        if let named = credential.instanceID, named != instanceID {
            throw SignetClientError(.responseMismatch, isRetryable: false, reason: "the certificate names another instance than the device record")
        }
        try await store { try await keyStore.save(key, certificateChain: chain.certificates) }
    }

    static func check(name: String?) throws {
        guard let name else { return }
        guard !name.isEmpty, name.count <= maximumNameLength else {
            throw SignetClientError(.misuse, isRetryable: false, reason: "a device name has 1 to \(maximumNameLength) characters")
        }
    }
}
