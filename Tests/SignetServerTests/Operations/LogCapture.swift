// Everything a provider logs, kept for the test to read.
import Logging
import SignetServer
import Synchronization

/// Collects the JSON lines a ``LogOutput`` logger writes.
final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    /// A logger at `level` whose lines land here.
    func logger(level: Logger.Level = .trace) -> Logger {
        LogOutput(level: level, format: .json).makeLogger(label: "signet") { [self] line in lines.withLock { $0.append(line) } }
    }

    var text: String { lines.withLock { $0.joined() } }

    /// Each line as a JSON object.
    var objects: [[String: Any]] {
        lines.withLock { $0 }.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }
}

import Foundation
