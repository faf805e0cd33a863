// The last decoded records by their stored JSON text, so one text is decoded once.
import Foundation
import Synchronization

/// Remembers the records decoded from stored JSON text: decoding is a pure function of the text,
/// so an unchanged text gives the same record without Foundation's JSON decoder, the largest cost
/// of reading a row. A token request reads the same client on every call, and the same code and
/// grant twice (checked, then spent); an edited record has another text and is decoded afresh, so
/// nothing here can be stale. Texts are compared byte for byte (not with `String`'s canonical
/// equivalence, which would take `é` and `e` + U+0301 for the same text).
///
/// Bounded: at most `capacity` texts, the oldest forgotten first, each at most `maximumTextBytes`
/// long (longer ones are decoded every time).
final class DecodedRecordMemo: Sendable {
    private struct Key: Hashable {
        let type: ObjectIdentifier
        let text: String
        /// The hash of `type` and `text`'s bytes, computed before the lock is taken.
        let hash: Int

        init(type: ObjectIdentifier, text: String) {
            self.type = type
            self.text = text
            var hasher = Hasher()
            hasher.combine(type)
            var text = text
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            hash = hasher.finalize()
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            guard lhs.hash == rhs.hash, lhs.type == rhs.type, lhs.text.utf8.count == rhs.text.utf8.count else { return false }
            var left = lhs.text, right = rhs.text
            return left.withUTF8 { left in
                right.withUTF8 { right in
                    guard let leftStart = left.baseAddress, let rightStart = right.baseAddress else { return left.count == right.count }
                    return memcmp(leftStart, rightStart, left.count) == 0
                }
            }
        }

        func hash(into hasher: inout Hasher) { hasher.combine(hash) }
    }

    private struct Entries {
        var records: [Key: any Sendable] = [:]
        /// Keys in the order they came, a ring of `capacity` slots.
        var order: [Key?]
        var next = 0
    }

    private let entries: Mutex<Entries>
    private let capacity: Int
    private let maximumTextBytes: Int

    init(capacity: Int, maximumTextBytes: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        self.maximumTextBytes = maximumTextBytes
        entries = Mutex(Entries(order: Array(repeating: nil, count: capacity)))
    }

    /// The record decoded from `text`, by `decode` the first time.
    func record<T: Sendable>(_ type: T.Type, from text: String, decode: (String) throws -> T) rethrows -> T {
        guard text.utf8.count <= maximumTextBytes else { return try decode(text) }
        let key = Key(type: ObjectIdentifier(type), text: text)
        if let known = entries.withLock({ $0.records[key] }) as? T { return known }
        let record = try decode(text)
        entries.withLock { entries in
            guard entries.records[key] == nil else { return }
            if let oldest = entries.order[entries.next] { entries.records[oldest] = nil }
            entries.order[entries.next] = key
            entries.next = (entries.next + 1) % capacity
            entries.records[key] = record
        }
        return record
    }
}
