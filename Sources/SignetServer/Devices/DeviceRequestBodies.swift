// The bodies the device endpoints take: a certificate signing request, raw or in JSON, and small JSON changes.
import Foundation
import Hummingbird
import SignetCore

/// An activation or reactivation body: the certificate signing request and how the user will know the device.
///
/// The request comes raw (`application/pkcs10` DER, or PEM as `application/pem-certificate-chain`,
/// `application/x-pem-file`, `text/plain`) or as `application/json` `{"csr", "name", "platform"}`.
struct EnrolmentBody: Sendable {
    /// The request's DER.
    let csrDER: [UInt8]
    let name: String?
    let platform: String?

    /// The media types taken.
    static let mediaTypes: Set<String> = [
        "application/pkcs10", "application/pem-certificate-chain", "application/x-pem-file", "text/plain", "application/json",
    ]
    /// The platforms an app may name.
    static let platforms: Set<String> = ["ios", "android", "macos", "linux", "other"]
    /// The longest device name.
    static let maximumNameLength = 64

    static func read(_ request: Request) async throws -> EnrolmentBody {
        let body = try await request.body.collect(upTo: DeviceCertificateAuthority.maximumRequestSize + 1024)
        guard body.readableBytes > 0 else { throw OAuthHTTPError.invalidRequest("the body must be a PKCS#10 certificate signing request") }
        let mediaType = request.headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        do {
            guard mediaType == "application/json" else {
                return EnrolmentBody(csrDER: try DeviceCertificateAuthority.csrDER(from: Array(buffer: body)), name: nil, platform: nil)
            }
            let json = try decodeJSON(JSONBody.self, from: body)
            guard let csr = json.csr, !csr.isEmpty else { throw OAuthHTTPError.invalidRequest("csr is missing") }
            return EnrolmentBody(
                csrDER: try DeviceCertificateAuthority.csrDER(fromPEM: csr), name: try json.name.map(checkedName),
                platform: try json.platform.map(checkedPlatform))
        } catch let error as SignetError {
            throw OAuthHTTPError.invalidRequest("\(error.code.label): \(error.reason)")
        }
    }

    /// A name a user may give a device: 1 to 64 characters, none that a listing would show
    /// other than stored (``SignetCore/DisplayedText/isName(_:)``).
    static func checkedName(_ name: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.count <= maximumNameLength, DisplayedText.isName(trimmed) else {
            throw OAuthHTTPError.invalidRequest(
                "name must be 1 to \(maximumNameLength) characters without control, line-separating or direction characters")
        }
        return trimmed
    }

    static func checkedPlatform(_ platform: String) throws -> String {
        guard platforms.contains(platform) else {
            throw OAuthHTTPError.invalidRequest("platform must be one of \(platforms.sorted().joined(separator: ", "))")
        }
        return platform
    }

    /// A JSON object of a small body, refusing anything else with `invalid_request`.
    static func decodeJSON<T: Decodable>(_ type: T.Type, from body: ByteBuffer) throws -> T {
        let data = Data(buffer: body)
        do { try JSONRequestBody.check(data) } catch { throw error.oauthError }
        do { return try JSONDecoder().decode(T.self, from: data) } catch {
            throw OAuthHTTPError.invalidRequest("the body must be a JSON object with the documented members (docs/devices.md)")
        }
    }

    private struct JSONBody: Decodable {
        let csr: String?
        let name: String?
        let platform: String?
    }
}
