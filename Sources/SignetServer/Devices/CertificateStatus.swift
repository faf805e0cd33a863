// What relying parties' own TLS terminators ask: the device CAs, and whether a certificate was revoked.
import Foundation
import Hummingbird
import SignetCore
import SignetStore

/// `GET /devices/ca.pem` and `GET /devices/certificate-status?serial=HEX`.
///
/// Inside Signet revocation is read from the store on every device request; these are for
/// relying parties that terminate mutual TLS themselves. A JSON status by serial (rather
/// than a CRL) is always current and needs no signing schedule.
struct CertificateStatus: Sendable {
    let store: any DeviceStore
    let authorities: DeviceAuthorities
    let clock: SignetClock

    /// `GET /devices/ca.pem`: the trusted device CA certificates, for TLS terminators and apps.
    /// Nothing is made here: the first CA is made when the application is built (`buildApplication`),
    /// a later one by an activation that finds the issuing CA near its end, or by `signet ca rotate`.
    func caCertificates(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let pems = try await authorities.trustedRecords().map(\.certificatePEM).joined(separator: "\n")
        // Only when the store lost its CAs, or they all expired, since the server started.
        guard !pems.isEmpty else {
            throw OAuthHTTPError(.notFound, .invalidRequest, "no device CA is trusted now: restart the server or run `signet ca rotate` to make one")
        }
        return Response(
            status: .ok, headers: [.contentType: "application/pem-certificate-chain", .cacheControl: "public, max-age=300"],
            body: .init(byteBuffer: ByteBuffer(string: pems)))
    }

    /// `{"serial", "status": "good" | "revoked" | "expired" | "unknown", "not_after"?, "revoked_at"?, "reason"?}`.
    ///
    /// `unknown`: no device has that certificate (initial certificates are never recorded; they
    /// live minutes). Not cached: an answer is as current as the store.
    func status(_ request: Request, context: SignetRequestContext) async throws -> Response {
        guard let raw = request.uri.queryParameters.get("serial") else { throw OAuthHTTPError.invalidRequest("serial is missing") }
        let serial = raw.lowercased().replacingOccurrences(of: ":", with: "")
        guard (2...64).contains(serial.count), serial.allSatisfy(\.isHexDigit) else {
            throw OAuthHTTPError.invalidRequest("serial must be hexadecimal")
        }
        var answer = Answer(serial: serial, status: "unknown")
        if let device = try await store.device(serial: serial) {
            answer.notAfter = Int(device.certificateNotAfter.timeIntervalSince1970)
            if let revokedAt = device.revokedAt {
                answer.status = "revoked"
                answer.revokedAt = Int(revokedAt.timeIntervalSince1970)
                answer.reason = device.revocationReason?.rawValue
            } else {
                answer.status = device.certificateNotAfter < clock.now() ? "expired" : "good"
            }
        }
        return JSONResponse.make(answer)
    }

    private struct Answer: Encodable {
        let serial: String
        var status: String
        var notAfter: Int?
        var revokedAt: Int?
        var reason: String?
        enum CodingKeys: String, CodingKey {
            case serial, status, reason
            case notAfter = "not_after"
            case revokedAt = "revoked_at"
        }
    }
}
