// Checking the signature of a JWT a client signed, with the keys it registered.
import Foundation
import JWTKit
import Logging
import SignetCore
import SignetJOSE
import SignetStore

/// Verifies JWTs signed by a client (client assertions, request objects) against its
/// registered `jwks` or `jwks_uri`: the header's `kid` and `alg` pick the key; an unknown
/// `kid` refetches a `jwks_uri` once (rate-limited by ``ClientKeySource``).
struct ClientJWTVerifier: Sendable {
    let keySource: any ClientKeySource
    let logger: Logger
    /// The clients' keys already made, for their next assertion or request object.
    let keys = JWKSignature()

    /// Why a signature was not accepted; the text is safe to send to the client.
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    /// Throws a ``Refusal`` unless `token` (already parsed into `jwt`) is signed by a key of `client`.
    func verify(_ token: String, _ jwt: CompactJWT, client: ClientRecord, what: String) async throws {
        let header = jwt.header
        guard FAPI2Profile.algorithms(for: client).contains(header.alg) else {
            throw Refusal(description: "\(what) alg \(header.alg.prefix(16)) is not accepted")
        }
        func matchingKeys(refresh: Bool) async throws -> [JWK] {
            let keySet: JWKS
            do { keySet = try await keySource.keySet(for: client, refresh: refresh) } catch let error as SignetError where error.code == .fetchRefused
            {
                logger.warning(
                    "jwks_uri fetch refused",
                    metadata: ["event": "jwks_uri.refused", "client_id": .string(client.id), "reason": .string(error.reason)])
                throw Refusal(description: "the client's keys could not be read: \(error.reason)")
            } catch {
                logger.warning(
                    "client keys unreadable",
                    metadata: ["event": "client_keys.unreadable", "client_id": .string(client.id), "error": .string(Self.logLabel(error))])
                throw Refusal(description: "the client's keys could not be read")
            }
            return keySet.keys.filter { key in
                (header.kid == nil || key.keyIdentifier?.string == header.kid) && (key.algorithm == nil || key.algorithm?.rawValue == header.alg)
            }
        }
        var candidates = try await matchingKeys(refresh: false)
        if candidates.isEmpty, client.jwksURI != nil { candidates = try await matchingKeys(refresh: true) }
        guard candidates.count == 1 || (header.kid != nil && !candidates.isEmpty), var key = candidates.first else {
            throw Refusal(description: "\(what) kid names no registered key")
        }
        guard await keys.verifies(jwt, jwk: &key, alg: header.alg) else {
            throw Refusal(description: "\(what) signature does not verify")
        }
    }

    /// A short, secret-free account of a failure to read a client's keys, for the log.
    static func logLabel(_ error: any Error) -> String {
        if let error = error as? SignetError { return "\(error.code.label): \(error.reason)" }
        return String(reflecting: type(of: error))
    }
}
