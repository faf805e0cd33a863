// The effective settings of one command: each value with where it came from.
import Foundation

/// A setting's value, typed as its ``SettingKey/Kind`` says.
enum SettingValue: Sendable, Equatable {
    case string(String)
    case integer(Int)
    case boolean(Bool)
    case list([String])

    /// The value as `config check` prints it.
    var text: String {
        switch self {
        case .string(let text): text
        case .integer(let number): String(number)
        case .boolean(let flag): String(flag)
        case .list(let items): items.joined(separator: ", ")
        }
    }
}

/// Where a value came from, in the precedence order: flag, environment, file, default.
enum SettingSource: Sendable, Equatable, CustomStringConvertible {
    case flag(String)
    case environment(String)
    case file(path: String, key: String)
    /// A secret read from the file a `…File` key or `…_FILE` variable named.
    case secretFile(path: String, via: String)

    var description: String {
        switch self {
        case .flag(let flag): "flag \(flag)"
        case .environment(let name): "environment \(name)"
        case .file(let path, let key): "\(path): \(key)"
        case .secretFile(let path, let via): "file \(path) (from \(via))"
        }
    }
}

/// The settings a command runs with: flags over `SIGNET_…` variables over the configuration file.
/// Defaults are not in here; each reader applies the one ``SettingKey/defaultDescription`` documents.
struct Settings: Sendable {
    struct Entry: Sendable {
        let value: SettingValue
        let source: SettingSource
    }

    /// The configuration file read, if any.
    let configurationFile: String?
    private let entries: [String: Entry]

    init(configurationFile: String?, entries: [String: Entry]) {
        (self.configurationFile, self.entries) = (configurationFile, entries)
    }

    /// Settings with nothing set, for code paths that need none.
    static let empty = Settings(configurationFile: nil, entries: [:])

    func entry(_ key: SettingKey) -> Entry? { entries[key.key] }

    func string(_ key: SettingKey) -> String? {
        guard case .string(let text)? = entries[key.key]?.value else { return nil }
        return text
    }

    func integer(_ key: SettingKey) -> Int? {
        guard case .integer(let number)? = entries[key.key]?.value else { return nil }
        return number
    }

    func boolean(_ key: SettingKey) -> Bool? {
        guard case .boolean(let flag)? = entries[key.key]?.value else { return nil }
        return flag
    }

    func list(_ key: SettingKey) -> [String] {
        guard case .list(let items)? = entries[key.key]?.value else { return [] }
        return items
    }

    /// A URL's scheme and host only: a gateway's URL may carry its API key in the path or query.
    static func origin(_ text: String) -> String {
        guard let url = URLComponents(string: text), let scheme = url.scheme, let host = url.host else { return "<redacted>" }
        return "\(scheme)://\(host)\(url.port.map { ":\($0)" } ?? "")/…"
    }

    /// Whether the value was given at all (by any source).
    func isSet(_ key: SettingKey) -> Bool { entries[key.key] != nil }

    /// The effective configuration as `signet config check` prints it: every setting, its value
    /// (secrets as `<redacted>`) and its source or `(default)`.
    func report() -> String {
        let width = SettingKey.all.map(\.key.count).max() ?? 20
        var lines = ["configuration file: \(configurationFile ?? "none")"]
        for key in SettingKey.all {
            let name = key.key.padding(toLength: width, withPad: " ", startingAt: 0)
            if let entry = entries[key.key] {
                let shown = key.isSecret ? "<redacted>" : key == .smsWebhookURL ? Self.origin(entry.value.text) : entry.value.text
                lines.append("\(name)  \(shown)   [\(entry.source)]")
            } else {
                lines.append("\(name)  \(key.defaultDescription)   [default]")
            }
        }
        return lines.joined(separator: "\n")
    }
}

/// Everything wrong with the settings, each naming the key and where it came from.
struct SettingsError: Error, CustomStringConvertible {
    let problems: [String]
    var description: String { "configuration errors:\n" + problems.map { "  - " + $0 }.joined(separator: "\n") }
}
