// Why a UAF message was refused, and how that is answered.
import Foundation
import HTTPTypes
import Hummingbird
import SignetCore

/// Why a UAF response (or the request for one) was refused: a decision the checks return.
enum UAFRefusal: Error, Sendable, Equatable {
    /// Malformed JSON or TLV, a wrong operation or version, a hash that does not match.
    case malformed(String)
    /// serverData missing, not made by this server, changed, or for another device, user or
    /// purpose; a challenge in fcParams that is not serverData's.
    case serverData(String)
    case expired
    /// The challenge was answered before.
    case replayed
    /// appID or facet id not trusted by the client.
    case untrustedFacet(String)
    /// AAID outside the policy (1492); an AAID, algorithm, key format, key or assertion scheme
    /// that does not fit (1498); an attestation not accepted (1496).
    case unacceptable(String, uafStatus: UAFStatusCode)
    /// The device already has the most authenticators it may.
    case deviceFull(maximum: Int)
    /// The user has this KeyID registered already.
    case duplicateKey
    /// No such authenticator on this device (removed, or never registered).
    case unknownAuthenticator
    /// The device has no authenticator a login can use.
    case noAuthenticator
    case invalidSignature(String)
    /// A non-zero counter that did not increase: possibly cloned.
    case cloned
    case transactionMismatch(String)
    /// A wrong PIN, counted: this many tries left, and the wait before the next.
    case wrongPIN(remaining: Int, retryAfter: TimeInterval?)
    /// A cool-down runs: nothing was checked.
    case pinCoolingDown(retryAfter: TimeInterval)
    /// The last wrong PIN removed the authenticator.
    case pinLockedOut

    var status: HTTPResponse.Status {
        switch self {
        case .malformed, .serverData, .expired, .replayed, .transactionMismatch: return .badRequest
        case .untrustedFacet, .unacceptable, .cloned, .pinLockedOut: return .forbidden
        case .deviceFull, .duplicateKey, .noAuthenticator: return .conflict
        case .unknownAuthenticator, .invalidSignature, .wrongPIN: return .unauthorized
        case .pinCoolingDown: return .tooManyRequests
        }
    }

    var code: OAuthError.Code {
        switch self {
        case .malformed, .serverData: return .invalidUAFMessage
        case .expired: return .uafRequestExpired
        case .replayed: return .uafRequestUsed
        case .untrustedFacet: return .untrustedFacet
        case .unacceptable: return .unacceptableAuthenticator
        case .deviceFull: return .authenticatorLimit
        case .duplicateKey: return .unacceptableAuthenticator
        case .unknownAuthenticator: return .unknownAuthenticator
        case .noAuthenticator: return .noAuthenticator
        case .invalidSignature: return .invalidSignature
        case .cloned: return .authenticatorRevoked
        case .transactionMismatch: return .transactionMismatch
        case .wrongPIN: return .wrongPIN
        case .pinCoolingDown: return .pinCoolDown
        case .pinLockedOut: return .pinLockedOut
        }
    }

    /// The UAF status code, as UAF Protocol 1.1's table ("UAF Status Codes") and the FIDO UAF
    /// server conformance tests use them. Clients act on it (1481 and 1493 make them delete the
    /// key), so: 1491 for a challenge missing, not made here, expired, mismatched or answered
    /// before; 1498 for any content the server will not process (a malformed message or
    /// assertion, a hash, appID or facet that does not match, a signature that does not verify);
    /// 1492 for the policy; 1493 for a revoked authenticator; 1481 for an unknown KeyID.
    var uafStatus: UAFStatusCode {
        switch self {
        case .serverData, .expired, .replayed: return .requestInvalid
        case .malformed, .untrustedFacet, .duplicateKey, .invalidSignature, .transactionMismatch: return .unacceptableContent
        case .unacceptable(_, let status): return status
        case .deviceFull: return .unacceptableAuthenticator
        case .unknownAuthenticator, .noAuthenticator: return .unknownKeyID
        case .wrongPIN, .pinCoolingDown: return .unauthorized
        case .cloned, .pinLockedOut: return .revokedAuthenticator
        }
    }

    var description: String {
        switch self {
        case .malformed(let why), .serverData(let why), .untrustedFacet(let why), .invalidSignature(let why), .transactionMismatch(let why):
            return why
        case .unacceptable(let why, _): return why
        case .expired: return "the UAF request expired; ask for a new one"
        case .replayed: return "this UAF request was answered already"
        case .deviceFull(let maximum): return "the device has \(maximum) authenticators, the most it may; remove one first"
        case .duplicateKey: return "an authenticator with this KeyID is registered already"
        case .unknownAuthenticator: return "no such authenticator is registered on this device; register it again"
        case .noAuthenticator: return "the device has no authenticator this login can use; register one"
        case .cloned: return "the authenticator's signature counter did not increase, so it may be cloned; it is refused from now on"
        case .wrongPIN(let remaining, _): return "wrong PIN; \(remaining) tries left before the PIN authenticator is removed"
        case .pinCoolingDown(let wait): return "too many wrong PINs; try again in \(Int(wait.rounded(.up))) seconds"
        case .pinLockedOut: return "too many wrong PINs: the PIN authenticator was removed; register it again"
        }
    }

    /// What the app shows about the PIN (Unlocked / LastAttemptFailed / LockedOut).
    var pinState: PINState? {
        switch self {
        case .wrongPIN(let remaining, let wait):
            return PINState(state: "last_attempt_failed", remainingTries: remaining, coolDown: wait.map { Int($0.rounded(.up)) })
        case .pinCoolingDown(let wait): return PINState(state: "last_attempt_failed", remainingTries: nil, coolDown: Int(wait.rounded(.up)))
        case .pinLockedOut: return PINState(state: "locked_out", remainingTries: 0, coolDown: nil)
        default: return nil
        }
    }

    var retryAfter: TimeInterval? {
        switch self {
        case .wrongPIN(_, let wait): return wait
        case .pinCoolingDown(let wait): return wait
        default: return nil
        }
    }
}

/// The PIN's state as the app shows it (seed 002's schedule, told by the server).
struct PINState: Codable, Sendable, Equatable {
    /// `unlocked`, `last_attempt_failed` or `locked_out`.
    var state: String
    var remainingTries: Int?
    /// Seconds before the next try is checked.
    var coolDown: Int?

    enum CodingKeys: String, CodingKey {
        case state
        case remainingTries = "remaining_tries"
        case coolDown = "cool_down"
    }
}

/// A refusal as an HTTP answer: the OAuth-style error, the UAF status code, the PIN's state and `Retry-After`.
struct UAFHTTPError: HTTPResponseError {
    let refusal: UAFRefusal

    var status: HTTPResponse.Status { refusal.status }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let error = OAuthError(refusal.code, refusal.description)
        var response = JSONResponse.make(
            Body(
                error: error.error.rawValue, errorDescription: error.errorDescription ?? "", uafStatusCode: refusal.uafStatus.rawValue,
                pin: refusal.pinState,
                retryAfter: refusal.retryAfter.map { Int($0.rounded(.up)) }),
            status: refusal.status)
        if let wait = refusal.retryAfter { response.headers[.retryAfter] = String(Int(wait.rounded(.up))) }
        return response
    }

    private struct Body: Encodable {
        let error: String
        let errorDescription: String
        let uafStatusCode: Int
        let pin: PINState?
        let retryAfter: Int?
        enum CodingKeys: String, CodingKey {
            case error, pin
            case errorDescription = "error_description"
            case uafStatusCode = "uaf_status_code"
            case retryAfter = "retry_after"
        }
    }
}
