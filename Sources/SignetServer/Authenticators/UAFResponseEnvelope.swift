// The parts of a UAF response every operation checks the same way: the envelope, serverData and fcParams.
import Foundation
import SignetCore
import SignetStore

/// A UAF response whose envelope was checked: one response, version 1.1, the operation
/// expected, serverData made by this server for this device and purpose and not expired, and
/// fcParams naming this appID, a facet the client trusts and the challenge of serverData.
struct CheckedUAFResponse: Sendable {
    let serverData: UAFServerData
    /// The one assertion's TLV bytes.
    let assertion: [UInt8]
    /// SHA-256 of the fcParams text: what `TAG_FINAL_CHALLENGE_HASH` must hold.
    let finalChallengeHash: [UInt8]
    let facetID: String
}

/// A UAF response read far enough to know its challenge: serverData made by this server, for
/// this device and purpose, not expired. The rest is checked once the challenge is spent.
struct ChallengedUAFResponse: Sendable {
    let serverData: UAFServerData
    let response: UAFResponse
}

/// Reads and checks the envelope of a UAF response (UAF Protocol §3.4.6.5 and §3.5.7.5, the
/// steps before the assertion itself), in two steps around the spend of its challenge: as
/// the UAF conformance tests expect, a response is first refused for its challenge (missing,
/// not ours, expired: 1491), and only an unspent challenge gets its content checked.
struct UAFResponseEnvelope: Sendable {
    let seal: UAFServerDataSeal
    /// The device the response came from (over mutual TLS).
    let device: DeviceRecord
    let client: ClientRecord
    let appID: String
    let now: Date

    /// The response and its serverData, or why it is refused: only as much JSON as finding the
    /// challenge needs, then serverData (present, sealed here, live, for this device and purpose).
    func challenge(_ body: Data, purposes: Set<UAFServerData.Purpose>) -> Result<ChallengedUAFResponse, UAFRefusal> {
        guard let envelope = try? JSONDecoder().decode(UAFSendResponse.self, from: body) else {
            return .failure(
                .malformed("the body must be a JSON object with uafResponse, the text of the UAF responses (UAF Transport Binding section 4.2.3)"))
        }
        guard let responses = try? JSONDecoder().decode([UAFResponse].self, from: Data(envelope.uafResponse.utf8)) else {
            return .failure(.malformed("uafResponse is not a JSON array of UAF responses"))
        }
        guard responses.count == 1, let response = responses.first else { return .failure(.malformed("uafResponse must hold exactly one response")) }
        guard let sealed = response.header.serverData else { return .failure(.serverData("serverData is missing")) }
        let serverData: UAFServerData
        switch seal.open(sealed, now: now) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let opened): serverData = opened
        }
        guard purposes.contains(serverData.purpose) else { return .failure(.serverData("serverData is for another operation")) }
        guard serverData.instanceID == device.instanceID, serverData.userID == device.userID, serverData.clientID == device.clientID else {
            return .failure(.serverData("serverData was made for another device"))
        }
        return .success(ChallengedUAFResponse(serverData: serverData, response: response))
    }

    /// The checked response, or why it is refused: the rest of the envelope, once its challenge is spent.
    func check(_ challenged: ChallengedUAFResponse, operation: UAFOperation) -> Result<CheckedUAFResponse, UAFRefusal> {
        let (response, serverData) = (challenged.response, challenged.serverData)
        guard response.header.upv == .supported else { return .failure(.malformed("only UAF 1.1 is supported")) }
        guard response.header.op == operation else {
            return .failure(.malformed("the response is for \(response.header.op.rawValue), not \(operation.rawValue)"))
        }
        // UAF Protocol §3.1.7: an extension that must be understood, and is not, refuses the message.
        let extensions = (response.header.exts ?? []) + response.assertions.flatMap { $0.exts ?? [] }
        if let unknown = extensions.first(where: \.failIfUnknown) {
            return .failure(.malformed("the extension \(unknown.id.prefix(32)) must be understood and is not"))
        }
        if let headerAppID = response.header.appID, headerAppID != appID {
            return .failure(.untrustedFacet("the response's appID is not this client's"))
        }
        // fcParams: the client's view of the request (UAF Protocol §3.2.1).
        guard response.fcParams.utf8.count <= 4096, let paramsJSON = Data(base64URLEncoded: response.fcParams),
            let params = try? JSONDecoder().decode(UAFFinalChallengeParams.self, from: paramsJSON)
        else { return .failure(.malformed("fcParams is not base64url FinalChallengeParams")) }
        guard params.appID == appID else { return .failure(.untrustedFacet("fcParams names another appID")) }
        guard client.facetIDs.contains(params.facetID) else {
            return .failure(.untrustedFacet("the facet \(params.facetID.prefix(128)) is not trusted by this client"))
        }
        // A mismatched challenge (UAF status 1491), as a missing or unknown one.
        guard ConstantTime.equals(params.challenge, serverData.challenge) else { return .failure(.serverData("fcParams names another challenge")) }
        guard response.assertions.count == 1, let assertion = response.assertions.first else {
            return .failure(.malformed("the response must hold exactly one assertion"))
        }
        guard assertion.assertionScheme == "UAFV1TLV" else {
            return .failure(.unacceptable("only the assertion scheme UAFV1TLV is supported", uafStatus: .unacceptableContent))
        }
        guard assertion.assertion.utf8.count <= 16_384, let tlv = Data(base64URLEncoded: assertion.assertion) else {
            return .failure(.malformed("the assertion is not base64url"))
        }
        return .success(
            CheckedUAFResponse(
                serverData: serverData, assertion: Array(tlv), finalChallengeHash: UAFFinalChallenge.hash(ofFCParams: response.fcParams),
                facetID: params.facetID))
    }
}

/// The appID of a client: the URL of its trusted facet list (FIDO AppID and Facet §3.1.2).
enum UAFAppID {
    static func of(clientID: String, issuer: String) -> String {
        let escaped = clientID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? clientID
        return issuer + "/uaf/facets/" + escaped
    }
}
