// A JSON request body read once, bounded, and refused when a member name repeats.
import Foundation
import Hummingbird
import NIOCore
import SignetCore

/// Reads the JSON bodies of the device and authenticator endpoints.
enum JSONRequestBody {
    /// The body's bytes, at most `limit` (413 beyond), refused when empty and `required`, or when
    /// a member name appears twice (JSONDecoder keeps one; a gateway in front may keep the other).
    static func data(_ request: Request, limit: Int, required: Bool = true) async throws -> Data {
        let buffer: ByteBuffer
        do { buffer = try await request.body.collect(upTo: limit) } catch is NIOTooManyBytesError {
            throw OAuthHTTPError(.contentTooLarge, .invalidRequest, "the body is larger than the \(limit) bytes allowed")
        }
        if required, buffer.readableBytes == 0 { throw OAuthHTTPError.invalidRequest("the body is empty") }
        let data = Data(buffer: buffer)
        if NULCharacter.isEncoded(inJSON: data) { throw OAuthHTTPError.invalidRequest(NULCharacter.refusal) }
        if case .repeated(let name) = JSONMemberNames(scanning: data) {
            throw OAuthHTTPError.invalidRequest("the body names \(name.prefix(64)) more than once")
        }
        return data
    }
}
