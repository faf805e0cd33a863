// serverData: what a UAF request was for, sealed by the server so the client can only return it.
import Crypto
import Foundation
import SignetCore

/// What a UAF request is for, carried through the client in `serverData` (UAF Protocol §3.1.8).
///
/// The client cannot change it: ``UAFServerDataSeal`` appends an HMAC-SHA256 under a key only
/// the provider holds (FIDO UAF Security Reference, "ServerData and KeyHandle"). It names the
/// challenge, who and which device it was made for, the operation and when it expires; the
/// challenge itself is used once (``ReplayStore/recordOnce(key:expiresAt:now:)``).
struct UAFServerData: Codable, Sendable, Equatable {
    /// What the request leads to.
    enum Purpose: String, Codable, Sendable {
        /// Registering a new authenticator.
        case register
        /// A device login (the login session names the authorization request).
        case login
        /// A PIN change: an authentication with the old PIN that carries the new PIN key.
        case changePIN = "change_pin"
    }

    var purpose: Purpose
    /// The base64url challenge sent in the request.
    var challenge: String
    var userID: String
    var instanceID: String
    var clientID: String
    /// Seconds since 1970.
    var expiresAt: Int
    /// The login session (its stored id) a device login continues.
    var loginSession: String?
    /// The authenticator (Signet's id) a PIN change is for.
    var authenticatorID: String?
    /// base64url SHA-256 of the transaction text the user must confirm, if any.
    var transactionHash: String?
    /// Registration: the registering login's `acr`, and a digest of the user's security stamp then.
    var registrationACR: String?
    var userStamp: String?

    enum CodingKeys: String, CodingKey {
        case purpose = "p"
        case challenge = "c"
        case userID = "u"
        case instanceID = "i"
        case clientID = "cl"
        case expiresAt = "e"
        case loginSession = "s"
        case authenticatorID = "a"
        case transactionHash = "t"
        case registrationACR = "r"
        case userStamp = "st"
    }
}

/// Seals and opens ``UAFServerData``: `base64url(JSON) "." base64url(HMAC-SHA256)`.
struct UAFServerDataSeal: Sendable {
    let key: SymmetricKey

    func seal(_ data: UAFServerData) throws -> String {
        let payload = try JSONEncoder().encode(data)
        let mac = HMAC<SHA256>.authenticationCode(for: Self.domain + payload, using: key)
        return payload.base64URLEncodedString() + "." + Data(mac).base64URLEncodedString()
    }

    /// The sealed data, or why it cannot be trusted (a decision, not a throw).
    func open(_ text: String, now: Date) -> Result<UAFServerData, UAFRefusal> {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard text.utf8.count <= 2048, parts.count == 2, let payload = Data(base64URLEncoded: String(parts[0])),
            let mac = Data(base64URLEncoded: String(parts[1]))
        else { return .failure(.serverData("serverData is malformed")) }
        guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Self.domain + payload, using: key) else {
            return .failure(.serverData("serverData was not made by this server or was changed"))
        }
        guard let data = try? JSONDecoder().decode(UAFServerData.self, from: payload) else { return .failure(.serverData("serverData is malformed")) }
        guard Date(timeIntervalSince1970: TimeInterval(data.expiresAt)) > now else { return .failure(.expired) }
        return .success(data)
    }

    /// Keeps these MACs apart from anything else the key might authenticate.
    private static let domain = Data("signet-uaf-server-data-v1.".utf8)
}
