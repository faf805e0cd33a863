// The `claims` request parameter (OIDC Core §5.5), read once and strictly.
import Foundation
import SignetCore

/// What Signet reads of a `claims` parameter: the ID token's `acr` and `instance_id` requests.
///
/// Read as the request bodies are: one JSON object, and no member named twice in it, in its
/// `id_token` object or in the claim requests Signet reads (the strict scan of
/// ``SignetCore/JSONObjectMembers``), then decoded with `JSONDecoder`, so `"essential": 1` is not
/// `true` and an `acr` value that is not a string is refused, not guessed. Other claims are
/// allowed and ignored.
struct ClaimsRequest: Sendable, Equatable {
    /// One claim's request (OIDC Core §5.5.1): `essential`, and `value` or `values`.
    struct Claim: Decodable, Sendable, Equatable {
        var essential: Bool?
        var value: String?
        var values: [String]?

        /// `value` and `values` together.
        var requested: [String] { (values ?? []) + [value].compactMap { $0 } }
    }

    private struct Document: Decodable {
        struct IDToken: Decodable {
            var acr: Claim?
            var instanceID: Claim?
            enum CodingKeys: String, CodingKey {
                case acr
                case instanceID = "instance_id"
            }
        }
        var idToken: IDToken?
        enum CodingKeys: String, CodingKey { case idToken = "id_token" }
    }

    /// The ID token's `acr` request.
    var acr: Claim?
    /// The ID token's `instance_id` request (issue 8: the instance a device login activates).
    var instanceID: Claim?

    /// Why a `claims` parameter is refused (`invalid_request`).
    struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        let description: String
    }

    /// The parameter read, or why it is refused.
    static func parse(_ text: String) -> Result<ClaimsRequest, Refusal> {
        let top: JSONObjectMembers
        switch JSONObjectMembers.scan(Array(text.utf8)) {
        case .malformed: return .failure(Refusal(description: "claims must be a JSON object (OIDC Core §5.5)"))
        case .repeated(let name): return .failure(Refusal(description: "claims names \(name.prefix(64)) more than once"))
        case .object(let members): top = members
        }
        do {
            if let idToken = try top.objectIfPresent("id_token") {
                for name in ["acr", DeviceInstances.claim] { _ = try idToken.objectIfPresent(name) }
            }
        } catch {
            return .failure(
                Refusal(description: "claims: id_token and its acr and instance_id requests must be JSON objects naming each member once"))
        }
        guard let document = try? JSONDecoder().decode(Document.self, from: Data(text.utf8)) else {
            return .failure(
                Refusal(description: "claims: the id_token acr and instance_id requests take essential (true or false) and string values"))
        }
        return .success(ClaimsRequest(acr: document.idToken?.acr, instanceID: document.idToken?.instanceID))
    }

    /// The `acr` values asked for as essential (OIDC Core §5.5.1.1), or `nil` when none is: a
    /// voluntary `acr` request asks for nothing.
    var essentialACR: [String]? {
        guard let acr, acr.essential == true, !acr.requested.isEmpty else { return nil }
        return acr.requested
    }
}
