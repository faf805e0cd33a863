// Finds the text literals the server can put in `error` and `error_description`, by reading its source.
import Foundation

/// The string literals passed to the calls that make wire errors, read from the source files.
///
/// A call is found by its name (`OAuthError(`, `fail(`, ...); its argument list is followed to the
/// matching parenthesis across lines; the literal parts of each string in it are kept, with
/// escapes decoded (so `\"` shows as the `"` it puts on the wire) and interpolations left out
/// (their values are client input, sanitised at run time).
enum ErrorTextScan {
    /// The calls whose string arguments end up as `error` or `error_description`.
    static let calls = [
        "OAuthError(", "OAuthHTTPError(", "OAuthHTTPError.invalidRequest(", "OAuthHTTPError.invalidGrant(", "invalidClient(", "challenge(",
        "fail(", "APIError(", "APIErrorBody(",
    ]

    struct Literal: CustomStringConvertible {
        let file: String
        let call: String
        let text: String
        var description: String { "\(file): \(call)… \"\(text)\"" }
    }

    /// The folder of the package, found from this file's path.
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// Every literal in those calls in the Swift files under `folders` (relative to the package).
    static func literals(in folders: [String]) throws -> [Literal] {
        var found: [Literal] = []
        for folder in folders {
            let base = packageRoot.appendingPathComponent(folder)
            guard let files = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in files where url.pathExtension == "swift" {
                let code = try String(contentsOf: url, encoding: .utf8)
                    .split(separator: "\n", omittingEmptySubsequences: false)
                    .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
                    .joined(separator: "\n")
                let name = url.path.replacingOccurrences(of: packageRoot.path + "/", with: "")
                for call in calls {
                    var searchStart = code.startIndex
                    while let range = code.range(of: call, range: searchStart..<code.endIndex) {
                        searchStart = range.upperBound
                        // `fail(` must be the whole name, not the end of `isFail(` or `.fail(`'s other meanings.
                        if range.lowerBound > code.startIndex, let before = code[code.index(before: range.lowerBound)...].first,
                            before.isLetter || before.isNumber || before == "_"
                        {
                            continue
                        }
                        let arguments = code[code.index(before: range.upperBound)...]
                        for text in stringLiterals(inParenthesised: arguments) {
                            found.append(Literal(file: name, call: call, text: text))
                        }
                    }
                }
            }
        }
        return found
    }

    /// The literal parts of the strings between `text`'s opening `(` and its matching `)`.
    static func stringLiterals(inParenthesised text: Substring) -> [String] {
        var literals: [String] = []
        var scalars = Array(text.unicodeScalars)[...]
        var depth = 0
        while let scalar = scalars.first {
            switch scalar {
            case "(":
                depth += 1
                scalars.removeFirst()
            case ")":
                depth -= 1
                scalars.removeFirst()
                if depth == 0 { return literals }
            case "#" where scalars.dropFirst().first == "\"":
                // A raw string: everything up to `"#` is literal.
                scalars.removeFirst(2)
                var literal = String.UnicodeScalarView()
                while let next = scalars.first, !(next == "\"" && scalars.dropFirst().first == "#") {
                    literal.append(next)
                    scalars.removeFirst()
                }
                scalars = scalars.dropFirst(2)
                literals.append(String(literal))
            case "\"":
                scalars.removeFirst()
                literals.append(contentsOf: string(&scalars))
            default:
                scalars.removeFirst()
            }
        }
        return literals
    }

    /// Reads a string body up to its closing quote; returns its literal segments.
    static func string(_ scalars: inout ArraySlice<Unicode.Scalar>) -> [String] {
        var segments: [String] = []
        var literal = String.UnicodeScalarView()
        while let scalar = scalars.first {
            scalars.removeFirst()
            switch scalar {
            case "\"":
                segments.append(String(literal))
                return segments
            case "\\":
                guard let escaped = scalars.first else { break }
                scalars.removeFirst()
                if escaped == "(" {
                    // An interpolation: skip to its closing parenthesis, strings inside included.
                    segments.append(String(literal))
                    literal = String.UnicodeScalarView()
                    var depth = 1
                    while depth > 0, let next = scalars.first {
                        scalars.removeFirst()
                        if next == "(" { depth += 1 } else if next == ")" { depth -= 1 } else if next == "\"" { _ = string(&scalars) }
                    }
                } else {
                    switch escaped {
                    case "n": literal.append("\n")
                    case "t": literal.append("\t")
                    case "r": literal.append("\r")
                    case "0": literal.append("\0")
                    default: literal.append(escaped)  // \" and \\ put the character itself on the wire
                    }
                }
            default:
                literal.append(scalar)
            }
        }
        segments.append(String(literal))
        return segments
    }
}
