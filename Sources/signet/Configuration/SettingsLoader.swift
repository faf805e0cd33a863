// Reads the settings through swift-configuration: flags over SIGNET_… variables over a YAML or
// JSON file. What that library does not do is here: refusing unknown keys (a typo must stop the
// server, not be ignored), secrets from files (`…_FILE`), and naming each value's source.
import Configuration
import Foundation
import SignetStorage
import Synchronization
import SystemPackage
import Yams

/// Loads ``Settings`` once, at the start of a command, and refuses any problem.
struct SettingsLoader {
    /// Values given as flags (they win over everything else).
    var flags: [SettingKey: SettingValue] = [:]
    /// `--config`; without it, `SIGNET_CONFIG`.
    var configurationPath: String?
    var environment: [String: String] = ProcessInfo.processInfo.environment

    /// Reads every setting; throws ``SettingsError`` naming every problem found.
    func load() async throws -> Settings {
        var problems: [String] = []
        let known = Dictionary(SettingKey.accepted.map { ($0.environmentName, $0) }, uniquingKeysWith: { first, _ in first })

        // The environment: every SIGNET_ variable must be a setting.
        var variables: [String: String] = [:]
        for (name, value) in environment where name.hasPrefix("SIGNET_") && !value.isEmpty {
            if SettingKey.otherEnvironmentNames.contains(name) || SettingKey.otherEnvironmentPrefixes.contains(where: name.hasPrefix) { continue }
            guard known[name] != nil else {
                problems.append("\(name) (environment): no such setting" + Self.suggestion(for: name, among: known.keys))
                continue
            }
            variables[String(name.dropFirst("SIGNET_".count))] = value
        }

        // The file: every leaf must be a setting.
        let path = configurationPath ?? environment["SIGNET_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
        var fileProvider: (any ConfigProvider)?
        if let path {
            do {
                let text = try String(contentsOfFile: path, encoding: .utf8)
                let acceptedKeys = Set(SettingKey.accepted.map(\.key))
                for key in try Self.leafKeys(ofYAML: text) where !acceptedKeys.contains(key) {
                    problems.append("\(path): unknown key '\(key)'" + Self.suggestion(for: key, among: acceptedKeys))
                }
                fileProvider =
                    path.lowercased().hasSuffix(".json")
                    ? try await FileProvider<JSONSnapshot>(filePath: FilePath(path)) as any ConfigProvider
                    : try await FileProvider<YAMLSnapshot>(filePath: FilePath(path))
            } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
                problems.append("\(path): no such configuration file")
            } catch {
                problems.append("\(path): not a valid configuration file\(Self.position(of: error))")
            }
        }
        guard problems.isEmpty else { throw SettingsError(problems: problems) }

        var flagValues: [AbsoluteConfigKey: ConfigValue] = [:]
        for (key, value) in flags {
            flagValues[AbsoluteConfigKey(ConfigKey(key.key))] = ConfigValue(value.content, isSecret: key.isSecret)
        }
        let secretNames = SettingKey.all.filter(\.isSecret).map { String($0.environmentName.dropFirst("SIGNET_".count)) }
        var providers: [any ConfigProvider] = [
            InMemoryProvider(name: "flags", values: flagValues),
            EnvironmentVariablesProvider(environmentVariables: variables, secretsSpecifier: .specific(Set(secretNames))),
        ]
        if let fileProvider { providers.append(fileProvider) }
        let recorder = AccessRecorder()
        let reader = ConfigReader(providers: providers, accessReporter: recorder)

        var entries: [String: Settings.Entry] = [:]
        for key in SettingKey.accepted {
            let value = Self.read(key, from: reader)
            guard let event = recorder.last else { continue }
            let sources: [SettingSource] = [
                .flag(key.flag ?? key.key), .environment(key.environmentName), .file(path: path ?? "", key: key.key),
            ]
            if let failed = event.providerResults.enumerated().first(where: { if case .failure = $0.element.result { true } else { false } }) {
                problems.append("\(key.key) (\(sources[failed.offset])): not a valid \(key.kind.rawValue)")
                continue
            }
            if event.conversionError != nil, let index = Self.providingIndex(event) {
                problems.append("\(key.key) (\(sources[index])): not a valid \(key.kind.rawValue)")
                continue
            }
            if let value, let index = Self.providingIndex(event) {
                entries[key.key] = Settings.Entry(value: value, source: sources[index])
            }
        }

        // Secrets from files: `x` or `xFile`, never both.
        for key in SettingKey.all {
            guard let fileKey = key.fileKey, let fileEntry = entries.removeValue(forKey: fileKey.key), case .string(let secretPath) = fileEntry.value
            else {
                continue
            }
            if let direct = entries[key.key] {
                problems.append("\(key.key) is given twice: \(direct.source) and \(fileEntry.source); keep one")
                continue
            }
            do {
                let secret = try String(contentsOfFile: secretPath, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
                guard !secret.isEmpty else {
                    problems.append("\(key.key) (\(fileEntry.source)): the file \(secretPath) is empty")
                    continue
                }
                let via: String = if case .environment(let name) = fileEntry.source { name } else { fileKey.key }
                entries[key.key] = Settings.Entry(value: .string(secret), source: .secretFile(path: secretPath, via: via))
            } catch {
                problems.append("\(key.key) (\(fileEntry.source)): cannot read \(secretPath)")
            }
        }
        if let entry = entries[SettingKey.database.key], case .string(let location) = entry.value {
            problems += Self.databaseProblems(location, source: entry.source)
        }
        guard problems.isEmpty else { throw SettingsError(problems: problems) }
        return Settings(configurationFile: path, entries: entries)
    }

    /// What is wrong with the `database` value, never echoing it (it may hold a password): a URL
    /// of a scheme Signet does not open, or a password in a flag, which others see in `ps`.
    static func databaseProblems(_ location: String, source: SettingSource) -> [String] {
        if let problem = SQLStore.locationProblem(location) { return ["database (\(source)): \(problem)"] }
        guard case .flag = source, SQLStore.sqlitePath(of: location) == nil, SQLStore.urlHasPassword(location) else { return [] }
        return [
            "database (\(source)): the URL holds a password, and a flag shows in ps; give the URL in SIGNET_DATABASE or the configuration file, or the password in SIGNET_DATABASE_PASSWORD_FILE"
        ]
    }

    /// Reads one key as its kind says; the recorder sees what each provider answered.
    private static func read(_ key: SettingKey, from reader: ConfigReader) -> SettingValue? {
        let configKey = ConfigKey(key.key)
        switch key.kind {
        case .string, .path: return reader.string(forKey: configKey, isSecret: key.isSecret).map(SettingValue.string)
        case .integer: return reader.int(forKey: configKey, isSecret: key.isSecret).map(SettingValue.integer)
        case .boolean: return reader.bool(forKey: configKey, isSecret: key.isSecret).map(SettingValue.boolean)
        case .list:
            guard let items = reader.stringArray(forKey: configKey, isSecret: key.isSecret) else { return nil }
            // Comma- or space-separated in one variable; trimmed either way.
            let separated: [String] = items.flatMap { (item: String) -> [String] in
                item.split(whereSeparator: { $0 == " " || $0 == "," }).map { String($0) }
            }
            return .list(separated)
        }
    }

    /// The index of the first provider that had a value.
    private static func providingIndex(_ event: AccessEvent) -> Int? {
        event.providerResults.firstIndex { result in
            if case .success(let lookup) = result.result { lookup.value != nil } else { false }
        }
    }

    /// The dotted paths of a YAML (or JSON) document's leaves; arrays are leaves.
    static func leafKeys(ofYAML text: String) throws -> [String] {
        guard let root = try Yams.compose(yaml: text) else { return [] }
        guard case .mapping = root else { throw SettingsError(problems: ["the top level must be a mapping of keys"]) }
        var keys: [String] = []
        func walk(_ node: Node, prefix: String) {
            guard let mapping = node.mapping else {
                keys.append(prefix)
                return
            }
            for (keyNode, value) in mapping {
                let name = keyNode.string ?? "?"
                walk(value, prefix: prefix.isEmpty ? name : prefix + "." + name)
            }
        }
        walk(root, prefix: "")
        return keys
    }

    /// Where a YAML error is, never its text: the parser quotes the line, which may hold a secret.
    static func position(of error: any Error) -> String {
        switch error {
        case YamlError.scanner(_, let problem, let mark, _), YamlError.parser(_, let problem, let mark, _),
            YamlError.composer(_, let problem, let mark, _):
            return " (line \(mark.line), column \(mark.column): \(problem))"
        case YamlError.duplicatedKeysInMapping(let duplicates, _):
            return " (a key appears twice: \(duplicates.joined(separator: ", ")))"
        case is SettingsError: return " (the top level must be a mapping of keys)"
        default: return " (not YAML or JSON)"
        }
    }

    /// ", did you mean …?" when a known name is one or two edits away.
    static func suggestion(for name: String, among candidates: some Sequence<String>) -> String {
        let best = candidates.map { ($0, EditDistance.between(name.lowercased(), $0.lowercased())) }.min { $0.1 < $1.1 }
        guard let best, best.1 <= 2 else { return "" }
        return "; did you mean '\(best.0)'?"
    }
}

/// Keeps the last access event, for the loader to see which provider answered.
private final class AccessRecorder: AccessReporter {
    private let lastEvent = Mutex<AccessEvent?>(nil)
    func report(_ event: AccessEvent) { lastEvent.withLock { $0 = event } }
    var last: AccessEvent? { lastEvent.withLock { $0 } }
}

extension SettingValue {
    /// The value as swift-configuration's content.
    var content: ConfigContent {
        switch self {
        case .string(let text): .string(text)
        case .integer(let number): .int(number)
        case .boolean(let flag): .bool(flag)
        case .list(let items): .stringArray(items)
        }
    }
}

/// Levenshtein distance, for suggestions (nothing in the dependencies offers it).
enum EditDistance {
    static func between(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
