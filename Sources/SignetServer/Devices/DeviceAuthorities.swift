// The device CAs the provider keeps in its store.
import Foundation
import SignetCore
import SignetStore
import Synchronization
import X509

/// Loads the device CAs from the store and makes the first one when there is none.
///
/// The newest CA issues; an older one stays trusted and published (`/devices/ca.pem`) until
/// the certificates it issued have expired, so a rotation strands no device and a rotated-out
/// (perhaps leaked) CA is dropped after at most one certificate lifetime. Two
/// instances starting on an empty store may each make one; both are kept and trusted.
public struct DeviceAuthorities: Sendable {
    let store: any DeviceStore
    let clock: SignetClock
    let random: SecureRandom

    /// The longest validity of a device certificate: how long a CA is trusted after it stops issuing.
    let certificateValidity: TimeInterval
    /// The CA certificates read and parsed lately, for the check every device request makes.
    let recent = RecentCertificates()

    public init(
        store: any DeviceStore, clock: SignetClock = .system, random: SecureRandom = SecureRandom(),
        certificateValidity: TimeInterval = 90 * 24 * 3600
    ) {
        self.store = store
        self.clock = clock
        self.random = random
        self.certificateValidity = certificateValidity
    }
    /// How long a new CA certificate is valid (longer than any device certificate it issues).
    static let caValidity: TimeInterval = 5 * 365 * 24 * 3600

    /// The CA that issues now, made and stored first when there is none, or made anew when the
    /// newest has less than two certificate lifetimes left: otherwise its last certificates would
    /// be cut short to its end, be due for reactivation at once, and all expire together.
    public func issuing() async throws -> DeviceCertificateAuthority {
        if let newest = try await trustedRecords().first, newest.notAfter > clock.now().addingTimeInterval(2 * certificateValidity) {
            return try load(newest)
        }
        let made = try await rotate()
        return try await trustedRecords().first.map(load) ?? made
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

    /// The CAs trusted now, newest (issuing) first: the newest, and each older one until the
    /// certificates it issued have expired — its successor's creation plus the longest
    /// certificate validity — and never past its own certificate.
    public func trusted() async throws -> [DeviceCertificateAuthority] {
        try await trustedRecords().map(load)
    }

    /// The trusted CAs as stored, newest first: what publishing needs, without loading any key.
    public func trustedRecords() async throws -> [DeviceCARecord] {
        let now = clock.now()
        let records = try await store.deviceCAs()
        return records.enumerated().filter { index, record in
            guard record.notAfter > now else { return false }
            return index == 0 || records[index - 1].createdAt.addingTimeInterval(certificateValidity) > now
        }.map(\.element)
    }

    /// The trusted CA certificates, newest first: what checking a device certificate needs.
    public func trustedCertificates() async throws -> [Certificate] {
        let records = try await trustedRecords()
        let parsed = try records.map { try Certificate(pemEncoded: $0.certificatePEM) }
        recent.keep(zip(records, parsed).map { ($0.0, $0.1) }, at: clock.now())
        return parsed
    }

    /// The trusted CA certificates as read at most `maximumAge` seconds ago (read again when
    /// older): a device request need not read and parse them each time. A caller that finds no
    /// issuer among them reads afresh (``trustedCertificates()``), so a CA made on another
    /// instance a moment ago is never missed.
    func recentTrustedCertificates(maximumAge: TimeInterval = 10) async throws -> [Certificate] {
        let now = clock.now()
        if let kept = recent.trusted(at: now, maximumAge: maximumAge, certificateValidity: certificateValidity) { return kept }
        return try await trustedCertificates()
    }

    private func load(_ record: DeviceCARecord) throws -> DeviceCertificateAuthority {
        try DeviceCertificateAuthority(privateKeyPEM: record.privateKeyPEM, certificatePEM: record.certificatePEM, random: random)
    }
}

/// The device CAs last read from the store, with their parsed certificates.
final class RecentCertificates: Sendable {
    private struct Kept {
        var entries: [(record: DeviceCARecord, certificate: Certificate)]
        var readAt: Date
    }
    private let kept = Mutex<Kept?>(nil)

    func keep(_ entries: [(DeviceCARecord, Certificate)], at now: Date) {
        kept.withLock { $0 = Kept(entries: entries.map { (record: $0.0, certificate: $0.1) }, readAt: now) }
    }

    /// The kept certificates still trusted at `now`, when read less than `maximumAge` ago.
    func trusted(at now: Date, maximumAge: TimeInterval, certificateValidity: TimeInterval) -> [Certificate]? {
        kept.withLock { kept in
            guard let kept, now.timeIntervalSince(kept.readAt) < maximumAge, now >= kept.readAt else { return nil }
            let entries = kept.entries
            return entries.enumerated().filter { index, entry in
                guard entry.record.notAfter > now else { return false }
                return index == 0 || entries[index - 1].record.createdAt.addingTimeInterval(certificateValidity) > now
            }.map(\.element.certificate)
        }
    }
}
