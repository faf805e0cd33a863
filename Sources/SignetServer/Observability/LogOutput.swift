// Where and how Signet logs: swift-log handlers for JSON lines and for text.
import Foundation
import Logging

/// How a process logs: the level and the format (docs/logging.md).
public struct LogOutput: Sendable {
    public enum Format: String, Sendable {
        /// One JSON object a line, for log collectors.
        case json
        /// swift-log's text lines, for people at a terminal.
        case text
    }

    public var level: Logger.Level
    public var format: Format

    public init(level: Logger.Level, format: Format) {
        (self.level, self.format) = (level, format)
    }

    /// A logger writing to standard error in this format, without bootstrapping the process-wide
    /// logging system (tests run several providers in one process).
    public func makeLogger(label: String, write: @escaping @Sendable (String) -> Void = JSONLogHandler.writeToStandardError) -> Logger {
        let format = self.format
        var logger = Logger(label: label) { label in
            switch format {
            case .json: JSONLogHandler(label: label, write: write)
            case .text: StreamLogHandler.standardError(label: label)
            }
        }
        logger.logLevel = level
        return logger
    }
}

/// A swift-log handler writing one JSON object a line: `time`, `level`, `label`, `message`, then the
/// metadata. Written here because swift-log ships only text handlers; it encodes by hand, as each
/// request logs a line and Foundation's encoder would cost more than the rest of the logging.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    public var metadataProvider: Logger.MetadataProvider?
    let label: String
    let write: @Sendable (String) -> Void

    public init(label: String, write: @escaping @Sendable (String) -> Void = JSONLogHandler.writeToStandardError) {
        (self.label, self.write) = (label, write)
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// RFC 3339 in UTC with milliseconds.
    static let timeFormat = Date.ISO8601FormatStyle(timeZone: .gmt).year().month().day().time(includingFractionalSeconds: true).timeZone(
        separator: .omitted)

    public func log(event: LogEvent) {
        var fields = metadata
        if let provided = metadataProvider?.get() { fields.merge(provided) { _, new in new } }
        if let extra = event.metadata { fields.merge(extra) { _, new in new } }
        var line = "{\"time\":"
        Self.appendString(Date().formatted(Self.timeFormat), to: &line)
        line += ",\"level\":"
        Self.appendString(event.level.rawValue, to: &line)
        line += ",\"label\":"
        Self.appendString(label, to: &line)
        line += ",\"message\":"
        Self.appendString(event.message.description, to: &line)
        for key in fields.keys.sorted() where !["time", "level", "label", "message"].contains(key) {
            line += ","
            Self.appendString(key, to: &line)
            line += ":"
            Self.appendValue(fields[key]!, to: &line)
        }
        line += "}\n"
        write(line)
    }

    /// One `write(2)` a line, so lines from concurrent requests never interleave.
    @Sendable public static func writeToStandardError(_ line: String) {
        FileHandle.standardError.write(Data(line.utf8))
    }

    static func appendValue(_ value: Logger.Metadata.Value, to line: inout String) {
        switch value {
        case .string(let text): appendString(text, to: &line)
        case .stringConvertible(let convertible):
            if let number = convertible as? any BinaryInteger {
                line += String(describing: number)
            } else if let number = convertible as? Double, number.isFinite {
                line += String(number)
            } else if let flag = convertible as? Bool {
                line += flag ? "true" : "false"
            } else {
                appendString(convertible.description, to: &line)
            }
        case .array(let items):
            line += "["
            for (index, item) in items.enumerated() {
                if index > 0 { line += "," }
                appendValue(item, to: &line)
            }
            line += "]"
        case .dictionary(let dictionary):
            line += "{"
            for (index, key) in dictionary.keys.sorted().enumerated() {
                if index > 0 { line += "," }
                appendString(key, to: &line)
                line += ":"
                appendValue(dictionary[key]!, to: &line)
            }
            line += "}"
        }
    }

    /// A JSON string literal (RFC 8259 §7): quotes, backslashes and control characters escaped.
    static func appendString(_ text: String, to line: inout String) {
        line += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": line += "\\\""
            case "\\": line += "\\\\"
            case "\n": line += "\\n"
            case "\r": line += "\\r"
            case "\t": line += "\\t"
            case let control where control.value < 0x20 || control.value == 0x7F || control.value == 0x2028 || control.value == 0x2029:
                line += String(format: "\\u%04x", control.value)
            default: line.unicodeScalars.append(scalar)
            }
        }
        line += "\""
    }
}
