// The last decoded records by their stored JSON text, so one text is decoded once.
import Synchronization

/// Remembers the records decoded from stored JSON text: decoding is a pure function of the text,
/// so an unchanged text gives the same record without Foundation's JSON decoder, the largest cost
/// of reading a row. A token request reads the same client on every call, and the same code and
/// grant twice (checked, then spent); an edited record has another text and is decoded afresh, so
/// nothing here can be stale. At most `capacity` texts are kept, the oldest forgotten first.
final class DecodedRecordMemo: Sendable {
    private struct Key: Hashable {
        let type: ObjectIdentifier
        let text: String
    }

    private struct Entries {
        var records: [Key: any Sendable] = [:]
        /// Keys in the order they came, a ring of `capacity` slots.
        var order: [Key?]
        var next = 0
    }

    private let entries: Mutex<Entries>
    private let capacity: Int

    init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        entries = Mutex(Entries(order: Array(repeating: nil, count: capacity)))
    }

    /// The record decoded from `text`, by `decode` the first time.
    func record<T: Sendable>(_ type: T.Type, from text: String, decode: (String) throws -> T) rethrows -> T {
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
