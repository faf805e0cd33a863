// Which writes an answer must wait for, on a store that flushes per answer (SQLite, `full`).
import Foundation

/// Marks the writes whose loss in a power failure weakens no check, so that an answer that made
/// only such writes need not wait for the disk (``WriteDurabilityStore``).
///
/// Every write binds by default: a code or `jti` spent, a failure counted, a lock, a revocation,
/// a logout, an administrative change. An answer that made one waits until it (and every commit
/// before its end) is on disk. Some writes only make something new that a later request must
/// present again: a login in progress, its steps, a code and its grant, a browser session, the
/// slots a password check holds while it runs, an audit event of those. A write-ahead log that
/// loses a write loses every later one with it (SQLite's log checksums chain its frames), so
/// such a write is only ever lost together with what it made, and the request that would use
/// that (a code at `/token`) waits for the disk itself before it answers. What an answer can
/// leak early is a page or a redirect whose code or cookie stops working after a power loss.
public enum WriteBinding {
    /// Whether the store's writes made now bind the answer to the disk.
    @TaskLocal public static var isBinding = true

    /// Runs `body`, whose writes do not by themselves make the answer wait for the disk.
    public static func notBinding<T>(_ body: () async throws -> T) async rethrows -> T {
        try await $isBinding.withValue(false) { try await body() }
    }
}
