// Rotation: the next key starts signing, a new next key is published, the old key retires.
import Foundation
import SignetCore
import SignetStore

/// What `signet keys rotate` does, as a function over the key store.
public enum KeyRotation {
    /// Promotes the next key (published since the previous rotation) to active, retires the
    /// active key (published until every token it signed has expired), publishes a new next
    /// key, and drops retired keys whose tokens have all expired.
    /// - Returns: the kid now signing.
    @discardableResult
    public static func rotate(store: any SigningKeyStore, now: Date, retiredKeyPublicationTime: TimeInterval) async throws -> String {
        let keys = try await store.signingKeys()
        for key in keys where key.status == .retired && (key.publishUntil ?? now) <= now {
            try await store.deleteSigningKey(kid: key.kid)
        }
        let next: SigningKeyRecord
        if let existing = keys.first(where: { $0.status == .next }) {
            next = existing
        } else {
            next = SigningKeyFactory.make(status: .next, now: now)
            try await store.insertSigningKey(next)
        }
        for key in keys where key.status == .active {
            try await store.updateSigningKey(kid: key.kid, status: .retired, publishUntil: now.addingTimeInterval(retiredKeyPublicationTime))
        }
        try await store.updateSigningKey(kid: next.kid, status: .active, publishUntil: nil)
        try await store.insertSigningKey(SigningKeyFactory.make(status: .next, now: now))
        return next.kid
    }
}
