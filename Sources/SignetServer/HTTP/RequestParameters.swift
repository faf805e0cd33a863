// Reading OAuth parameters from a query string or a form body, strictly.
import Foundation
import Hummingbird
import NIOCore
import SignetCore

/// Reads request parameters: the query for GET, an `application/x-www-form-urlencoded` body for POST.
public enum RequestParameters {
    /// The parameters of a GET (query) or POST (form body, never mixed with a query) request.
    ///
    /// - Throws: ``OAuthHTTPError`` 400 for a query on a POST or malformed encoding, 415 for a
    ///   wrong content type, and Hummingbird's 413 when the body exceeds `maxBodySize`.
    public static func read(_ request: Request, maxBodySize: Int) async throws -> FormParameters {
        switch request.method {
        case .get, .head:
            return try parse(request.uri.query ?? "")
        case .post:
            if let query = request.uri.query, !query.isEmpty {
                throw OAuthHTTPError.invalidRequest("parameters must be sent in the body, not the query")
            }
            return try await form(request, maxBodySize: maxBodySize)
        default:
            throw HTTPError(.methodNotAllowed)
        }
    }

    /// The parameters of a form body; the content type must be `application/x-www-form-urlencoded`.
    public static func form(_ request: Request, maxBodySize: Int) async throws -> FormParameters {
        guard isForm(request.headers[.contentType]) else {
            throw OAuthHTTPError(.unsupportedMediaType, .invalidRequest, "the body must be application/x-www-form-urlencoded")
        }
        let buffer = try await request.body.collect(upTo: maxBodySize)
        // A raw byte that is not UTF-8 is refused, as `%ff` is by the decoder: never read as U+FFFD.
        guard let text = String(validating: buffer.readableBytesView, as: UTF8.self) else {
            throw OAuthHTTPError.invalidRequest("the body is not UTF-8")
        }
        return try parse(text)
    }

    static func parse(_ text: String) throws -> FormParameters {
        // No parameter holds U+0000 (PostgreSQL text cannot, and nothing needs it).
        if NULCharacter.isEncoded(inForm: text) { throw OAuthHTTPError.invalidRequest(NULCharacter.refusal) }
        guard let parameters = FormParameters(encoded: text) else {
            throw OAuthHTTPError.invalidRequest("the parameters are not valid percent-encoding")
        }
        return parameters
    }

    static func isForm(_ contentType: String?) -> Bool {
        mediaType(of: contentType) == "application/x-www-form-urlencoded"
    }

    /// The media type of a `Content-Type` value, lowercased, without parameters or the spaces and
    /// tabs around it (RFC 9110 §8.3.1). Read by bytes: trimming with Foundation's character sets
    /// and splitting the String by Characters cost more than the rest of the check.
    static func mediaType(of contentType: String?) -> String? {
        guard var contentType else { return nil }
        return contentType.withUTF8 { bytes in
            let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
            var start = 0
            var end = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.count
            while start < end, isBlank(bytes[start]) { start += 1 }
            while end > start, isBlank(bytes[end - 1]) { end -= 1 }
            return String(unsafeUninitializedCapacity: end - start) { output in
                for offset in 0..<(end - start) {
                    let byte = bytes[start + offset]
                    output[offset] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
                }
                return end - start
            }
        }
    }
}
