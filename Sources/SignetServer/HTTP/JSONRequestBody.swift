// The one reader of JSON request bodies: read once, bounded, strict (no repeated member, no NUL).
import Foundation
import Hummingbird
import NIOCore
import SignetCore

/// Reads every JSON request body Signet takes (the device, UAF, device login and native login APIs).
///
/// Strict where `JSONDecoder` is lenient: a member name that appears twice is refused
/// (`JSONDecoder` keeps one; a gateway in front may keep the other), and so is U+0000. What is
/// wrong is a ``Refusal``, which each error dialect words as its own (``Refusal/oauthError``,
/// ``Refusal/apiError``).
enum JSONRequestBody {
    /// Why a body was refused.
    enum Refusal: Error, Equatable {
        case tooLarge(limit: Int)
        case empty
        case nul
        case repeated(String)
        case notJSON

        var description: String {
            switch self {
            case .tooLarge(let limit): "the body is larger than the \(limit) bytes allowed"
            case .empty: "the body is empty"
            case .nul: NULCharacter.refusal
            case .repeated(let name): "the body names \(name.prefix(64)) more than once"
            case .notJSON: "the body must be one JSON object"
            }
        }

        /// The refusal as an OAuth error (`invalid_request`; 413 when too large).
        var oauthError: OAuthHTTPError {
            if case .tooLarge = self { return OAuthHTTPError(.contentTooLarge, .invalidRequest, description) }
            return OAuthHTTPError.invalidRequest(description)
        }

        /// The refusal as the API error (`invalid_request`; 413 when too large).
        var apiError: APIError {
            if case .tooLarge = self { return APIError(.contentTooLarge, "invalid_request", description, retryable: false) }
            return APIError(.badRequest, "invalid_request", description, retryable: self != .nul)
        }
    }

    /// The body's bytes, at most `limit`, checked (``check(_:required:)``); refusals as OAuth errors.
    static func data(_ request: Request, limit: Int, required: Bool = true) async throws -> Data {
        do { return try await read(request, limit: limit, required: required) } catch let refusal as Refusal { throw refusal.oauthError }
    }

    /// The body's bytes, at most `limit`, checked; throws ``Refusal``.
    static func read(_ request: Request, limit: Int, required: Bool = true) async throws -> Data {
        let buffer: ByteBuffer
        do { buffer = try await request.body.collect(upTo: limit) } catch is NIOTooManyBytesError { throw Refusal.tooLarge(limit: limit) }
        let data = Data(buffer: buffer)
        try check(data, required: required)
        return data
    }

    /// Refuses an empty body (when `required`), U+0000, a repeated member name, and anything
    /// the strict scanner cannot read as JSON: what it cannot read is never left to
    /// `JSONDecoder`, which reads more (a byte-order mark before the text, say) and so could
    /// keep one of two members the scanner never saw (RFC 8259 §4, §8.1).
    static func check(_ data: Data, required: Bool = true) throws(Refusal) {
        if data.isEmpty {
            if required { throw .empty }
            return
        }
        if NULCharacter.isEncoded(inJSON: data) { throw .nul }
        switch JSONMemberNames(scanning: data) {
        case .unique: return
        case .repeated(let name): throw .repeated(name)
        case .malformed: throw .notJSON
        }
    }
}
