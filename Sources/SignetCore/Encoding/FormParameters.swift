// Strict parsing of application/x-www-form-urlencoded and query strings.
import Foundation

/// Parameters of a form body or query string, with duplicates kept so
/// that they can be refused (RFC 6749 §3.1: parameters must not be repeated).
public struct FormParameters: Sendable, Equatable {
    /// Name and value pairs in the order they appeared.
    public private(set) var pairs: [(name: String, value: String)]

    public init(_ pairs: [(name: String, value: String)] = []) { self.pairs = pairs }

    public static func == (lhs: FormParameters, rhs: FormParameters) -> Bool {
        lhs.pairs.elementsEqual(rhs.pairs) { $0.name == $1.name && $0.value == $1.value }
    }

    /// Parses `a=b&c=d` text; `nil` when the percent-encoding is malformed.
    public init?(encoded text: String) {
        var text = text
        guard let pairs = text.withUTF8({ Self.pairs(in: $0) }) else { return nil }
        self.pairs = pairs
    }

    /// The pairs of `bytes`, split on the bytes `&` and `=` as the URL standard does. Over the
    /// contiguous UTF-8 because splitting the String walks grapheme clusters, and even its UTF-8
    /// view's generic split cost more than the rest of a token request's parsing.
    private static func pairs(in bytes: UnsafeBufferPointer<UInt8>) -> [(name: String, value: String)]? {
        var pairs: [(name: String, value: String)] = []
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.count
            if end > start {
                let part = UnsafeBufferPointer(rebasing: bytes[start..<end])
                let equals = part.firstIndex(of: UInt8(ascii: "="))
                guard let name = decode(UnsafeBufferPointer(rebasing: part[..<(equals ?? part.count)])) else { return nil }
                let value = equals.map { decode(UnsafeBufferPointer(rebasing: part[($0 + 1)...])) } ?? ""
                guard let value else { return nil }
                pairs.append((name, value))
            }
            start = end + 1
        }
        return pairs
    }

    /// `+` as a space, then `%XX` escapes, over the UTF-8 bytes; `nil` for a malformed escape
    /// or bytes that are not UTF-8. By hand because Foundation's `removingPercentEncoding`
    /// (with the `+` replaced first) was a visible cost on every token request.
    private static func decode(_ text: UnsafeBufferPointer<UInt8>) -> String? {
        // Cut from valid UTF-8 at ASCII bytes, so still valid.
        guard text.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else { return String(decoding: text, as: UTF8.self) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count)
        var index = 0
        while index < text.count {
            let byte = text[index]
            index += 1
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard index + 1 < text.count, let high = hexValue(text[index]), let low = hexValue(text[index + 1]) else { return nil }
                index += 2
                bytes.append(high << 4 | low)
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The single value of `name`; `nil` when absent. Use ``duplicatedNames`` to refuse repeats first.
    public subscript(name: String) -> String? { pairs.first { $0.name == name }?.value }

    /// The names that appear more than once.
    public var duplicatedNames: [String] {
        var seen = Set<String>(), duplicated: [String] = []
        for pair in pairs where !seen.insert(pair.name).inserted && !duplicated.contains(pair.name) {
            duplicated.append(pair.name)
        }
        return duplicated
    }

    /// Adds a pair.
    public mutating func append(_ name: String, _ value: String?) {
        if let value { pairs.append((name, value)) }
    }

    /// The percent-encoded `a=b&c=d` text.
    public var encoded: String {
        pairs.map { "\(Self.encode($0.name))=\(Self.encode($0.value))" }.joined(separator: "&")
    }

    /// `url` with these parameters added to its query (RFC 6749 §3.1: a URL's own query is kept):
    /// `?` when it has no query, `&` between its query and these, nothing more when it already
    /// ends in `?` or `&`; `url` unchanged when there are none. The one way Signet's server, SDK
    /// and kit add a query, so none gives `?&` or drops a query. `url` has no fragment (redirect
    /// URIs and endpoints may not).
    public func appended(to url: String) -> String {
        guard !pairs.isEmpty else { return url }
        guard let question = url.firstIndex(of: "?") else { return url + "?" + encoded }
        let query = url[url.index(after: question)...]
        return url + (query.isEmpty || query.hasSuffix("&") ? "" : "&") + encoded
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// Percent-encodes everything but RFC 3986 unreserved characters.
    public static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }
}
