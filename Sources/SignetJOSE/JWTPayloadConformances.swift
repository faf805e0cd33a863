// The claim sets of SignetCore as jwt-kit payloads, for the modules that sign and verify.
//
// SignetCore's claim types are plain `Codable` so that an app (SignetClient) does not link
// jwt-kit; the server and the relying-party kit import this module to sign and verify them.
// Claim checks are the caller's, with an explicit clock, so `verify(using:)` checks nothing.
import JWTKit
import SignetCore

extension IDTokenClaims: JWTPayload {
    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}

extension AccessTokenClaims: JWTPayload {
    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}

extension ClientAssertionClaims: JWTPayload {
    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Any claims: for checking only a JWS's signature; the caller reads the claims itself.
public struct AnyJWTClaims: JWTPayload {
    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}
