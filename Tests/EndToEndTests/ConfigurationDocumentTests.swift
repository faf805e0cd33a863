// docs/configuration.md lists exactly the keys the code reads, with their flags and variables.
import Foundation
import Testing

@testable import signet

@Suite("Configuration: the document and the code agree")
struct ConfigurationDocumentTests {
    /// The package root, found from this file.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("every key in the code is in docs/configuration.md with its flag and variable, and no other")
    func keysMatch() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        var documented: [String: (flag: String, environment: String)] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3 else { continue }
            let key = cells[0].split(separator: "`")[0]
            documented[String(key)] = (cells[1], cells[2])
        }
        let inCode = Set(SettingKey.all.map(\.key))
        #expect(
            Set(documented.keys) == inCode,
            "only in the document: \(Set(documented.keys).subtracting(inCode)); only in the code: \(inCode.subtracting(documented.keys))")
        for key in SettingKey.all {
            guard let row = documented[key.key] else { continue }
            #expect(row.flag == (key.flag.map { "`\($0)`" } ?? "—"), "flag of \(key.key)")
            #expect(row.environment.hasPrefix("`\(key.environmentName)`"), "variable of \(key.key)")
            if let fileKey = key.fileKey { #expect(row.environment.contains("`\(fileKey.environmentName)`"), "file variable of \(key.key)") }
        }
    }
}
