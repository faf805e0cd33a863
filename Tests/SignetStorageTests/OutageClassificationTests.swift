import AsyncKit
import Foundation
import NIOCore
import NIOPosix
import SignetCore
import Testing

@testable import SignetStorage

/// Which PostgreSQL-side errors mean "the database cannot be reached now" (answered 503 with
/// Retry-After) rather than "the statement failed" (500).
@Suite("PostgreSQL outages are told from failed statements")
struct OutageClassificationTests {
    @Test(
        "a refused, reset or timed-out connection, a closed channel and a pool that gave no connection in time are outages; other errors are not, and pass through unchanged"
    )
    func classification() {
        for outage: any Error in [
            IOError(errnoCode: ECONNREFUSED, reason: "connect"), IOError(errnoCode: ECONNRESET, reason: "read"),
            IOError(errnoCode: ETIMEDOUT, reason: "connect"),
            ChannelError.ioOnClosedChannel, ChannelError.eof, ConnectionPoolTimeoutError.connectionRequestTimeout,
        ] {
            #expect(GuardedPostgres.isOutage(outage), "\(outage)")
            #expect((GuardedPostgres.translated(outage) as? SignetError)?.code == .storageUnavailable)
        }
        for failure: any Error in [IOError(errnoCode: EACCES, reason: "open"), SignetError(.conflict, "duplicate"), CancellationError()] {
            #expect(!GuardedPostgres.isOutage(failure), "\(failure)")
            #expect((GuardedPostgres.translated(failure) as? SignetError)?.code != .storageUnavailable)
        }
    }
}
