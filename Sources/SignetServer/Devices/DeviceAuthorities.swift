// The device CAs the provider keeps in its store.
import Foundation
import SignetCore

/// Loads the device CAs from the store and makes the first one when there is none.
///
/// The newest CA issues; every CA whose certificate has not expired is trusted and published
/// (`/devices/ca.pem`), so a rotation never strands certificates issued before it. Two
/// instances starting on an empty store may each make one; both are kept and trusted.
public struct DeviceAuthorities: Sendable {
    let store: any DeviceStore
    let clock: SignetClock
    let random: SecureRandom

    public init(store: any DeviceStore, clock: SignetClock = .system, random: SecureRandom = SecureRandom()) {
        self.store = store
        self.clock = clock
        self.random = random
    }
    /// How long a new CA certificate is valid (longer than any device certificate it issues).
    static let caValidity: TimeInterval = 5 * 365 * 24 * 3600

    /// The CA that issues now, made and stored first when there is none.
    public func issuing() async throws -> DeviceCertificateAuthority {
        if let newest = try await trusted().first { return newest }
        let made = try await rotate()
        return try await trusted().first ?? made
    }

    /// Makes a new CA that issues from now on; the older ones stay trusted (and published) until
    /// their certificates expire, so devices activated before keep working.
    @discardableResult
    public func rotate() async throws -> DeviceCertificateAuthority {
        let made = try DeviceCertificateAuthority.make(name: "Signet", validity: Self.caValidity, now: clock.now(), random: random)
        try await store.insertDeviceCA(
            DeviceCARecord(
                id: made.fingerprint, privateKeyPEM: made.privateKeyPEM, certificatePEM: made.certificatePEM, createdAt: clock.now(),
                notAfter: made.certificate.notValidAfter))
        return made
    }

    /// Every CA whose certificate is still valid, newest first.
    public func trusted() async throws -> [DeviceCertificateAuthority] {
        let now = clock.now()
        return try await store.deviceCAs().filter { $0.notAfter > now }.map {
            try DeviceCertificateAuthority(privateKeyPEM: $0.privateKeyPEM, certificatePEM: $0.certificatePEM, random: random)
        }
    }
}
