// The UAF protocol messages (FIDO UAF Protocol Specification 1.1 §3.4–3.6) and their HTTP
// envelopes (FIDO UAF Application API and Transport Binding §4.2), as Codable values.
import Crypto
import Foundation

/// `Version` — UAF Protocol §3.1.1.
public struct UAFVersion: Codable, Sendable, Equatable {
    public var major: Int
    public var minor: Int
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }
    /// UAF 1.1, the only version Signet speaks.
    public static let supported = UAFVersion(major: 1, minor: 1)
}

/// `Operation` — UAF Protocol §3.1.3.
public enum UAFOperation: String, Codable, Sendable {
    case registration = "Reg"
    case authentication = "Auth"
    case deregistration = "Dereg"
}

/// `Extension` of a JSON message — UAF Protocol §3.1.7.
public struct UAFMessageExtension: Codable, Sendable, Equatable {
    public var id: String
    public var data: String
    /// fail_if_unknown — a receiver that does not understand it must refuse the message.
    public var failIfUnknown: Bool

    public init(id: String, data: String, failIfUnknown: Bool) {
        self.id = id
        self.data = data
        self.failIfUnknown = failIfUnknown
    }

    enum CodingKeys: String, CodingKey {
        case id, data
        case failIfUnknown = "fail_if_unknown"
    }
}

/// `OperationHeader` — UAF Protocol §3.1.8.
public struct UAFHeader: Codable, Sendable, Equatable {
    /// upv — the protocol version.
    public var upv: UAFVersion
    public var op: UAFOperation
    /// appID — the URL of the trusted facet list.
    public var appID: String?
    /// serverData — opaque to the client, authenticated by the server.
    public var serverData: String?
    public var exts: [UAFMessageExtension]?

    public init(op: UAFOperation, appID: String?, serverData: String?) {
        self.upv = .supported
        self.op = op
        self.appID = appID
        self.serverData = serverData
    }
}

/// `MatchCriteria` — UAF Protocol §3.1.10 (the members Signet sends and reads).
public struct UAFMatchCriteria: Codable, Sendable, Equatable {
    public var aaid: [String]?
    public var keyIDs: [String]?
    public var assertionSchemes: [String]?

    public init(aaid: [String]? = nil, keyIDs: [String]? = nil, assertionSchemes: [String]? = ["UAFV1TLV"]) {
        self.aaid = aaid
        self.keyIDs = keyIDs
        self.assertionSchemes = assertionSchemes
    }
}

/// `Policy` — UAF Protocol §3.1.11: which authenticators may answer.
public struct UAFPolicy: Codable, Sendable, Equatable {
    /// Each inner list is a combination that together satisfies the policy.
    public var accepted: [[UAFMatchCriteria]]
    public var disallowed: [UAFMatchCriteria]?

    public init(accepted: [[UAFMatchCriteria]], disallowed: [UAFMatchCriteria]? = nil) {
        self.accepted = accepted
        self.disallowed = disallowed
    }
}

/// `RegistrationRequest` — UAF Protocol §3.4.1.
public struct UAFRegistrationRequest: Codable, Sendable, Equatable {
    public var header: UAFHeader
    public var challenge: String
    public var username: String
    public var policy: UAFPolicy

    public init(header: UAFHeader, challenge: String, username: String, policy: UAFPolicy) {
        self.header = header
        self.challenge = challenge
        self.username = username
        self.policy = policy
    }
}

/// `Transaction` — UAF Protocol §3.5.1: content the authenticator shows and the user confirms.
public struct UAFTransaction: Codable, Sendable, Equatable {
    /// `text/plain` (Signet shows text only).
    public var contentType: String
    /// base64url of the content.
    public var content: String

    public init(contentType: String, content: String) {
        self.contentType = contentType
        self.content = content
    }
}

/// `AuthenticationRequest` — UAF Protocol §3.5.2.
public struct UAFAuthenticationRequest: Codable, Sendable, Equatable {
    public var header: UAFHeader
    public var challenge: String
    public var transaction: [UAFTransaction]?
    public var policy: UAFPolicy

    public init(header: UAFHeader, challenge: String, transaction: [UAFTransaction]?, policy: UAFPolicy) {
        self.header = header
        self.challenge = challenge
        self.transaction = transaction
        self.policy = policy
    }
}

/// `DeregisterAuthenticator` — UAF Protocol §3.6.1.
public struct UAFDeregisterAuthenticator: Codable, Sendable, Equatable {
    public var aaid: String
    /// base64url of the KeyID.
    public var keyID: String
    public init(aaid: String, keyID: String) {
        self.aaid = aaid
        self.keyID = keyID
    }
}

/// `DeregistrationRequest` — UAF Protocol §3.6.2: keys the client must forget.
public struct UAFDeregistrationRequest: Codable, Sendable, Equatable {
    public var header: UAFHeader
    public var authenticators: [UAFDeregisterAuthenticator]
    public init(header: UAFHeader, authenticators: [UAFDeregisterAuthenticator]) {
        self.header = header
        self.authenticators = authenticators
    }
}

/// `FinalChallengeParams` — UAF Protocol §3.2.1: what the client binds the assertion to.
public struct UAFFinalChallengeParams: Codable, Sendable, Equatable {
    public var appID: String
    public var challenge: String
    public var facetID: String
    /// `ChannelBinding` — §3.2.2 (Signet's clients send `{}`: the device is bound by mutual TLS).
    public var channelBinding: [String: String]

    public init(appID: String, challenge: String, facetID: String, channelBinding: [String: String] = [:]) {
        self.appID = appID
        self.challenge = challenge
        self.facetID = facetID
        self.channelBinding = channelBinding
    }
}

/// `AuthenticatorRegistrationAssertion` / `AuthenticatorSignAssertion` — UAF Protocol §3.4.6, §3.5.6.
public struct UAFAuthenticatorAssertion: Codable, Sendable, Equatable {
    /// `UAFV1TLV`.
    public var assertionScheme: String
    /// base64url of the TLV assertion.
    public var assertion: String
    public var exts: [UAFMessageExtension]?

    public init(assertion: [UInt8]) {
        self.assertionScheme = "UAFV1TLV"
        self.assertion = Data(assertion).base64URLEncodedString()
    }
}

/// `RegistrationResponse` / `AuthenticationResponse` — UAF Protocol §3.4.6, §3.5.6 (same shape).
public struct UAFResponse: Codable, Sendable, Equatable {
    public var header: UAFHeader
    /// base64url of the serialised ``UAFFinalChallengeParams``.
    public var fcParams: String
    public var assertions: [UAFAuthenticatorAssertion]

    public init(header: UAFHeader, fcParams: String, assertions: [UAFAuthenticatorAssertion]) {
        self.header = header
        self.fcParams = fcParams
        self.assertions = assertions
    }
}

/// `ReturnUAFRequest` — UAF Transport Binding §4.2.2: a UAF request, as the server sends it.
public struct UAFReturnRequest: Codable, Sendable, Equatable {
    /// statusCode — 1200 when the request was made.
    public var statusCode: Int
    /// uafRequest — the JSON text of the array of UAF requests.
    public var uafRequest: String
    public var op: UAFOperation
    /// lifetimeMillis — how long the request is good for.
    public var lifetimeMillis: Int

    public init(statusCode: Int = 1200, uafRequest: String, op: UAFOperation, lifetimeMillis: Int) {
        self.statusCode = statusCode
        self.uafRequest = uafRequest
        self.op = op
        self.lifetimeMillis = lifetimeMillis
    }
}

/// `SendUAFResponse` — UAF Transport Binding §4.2.3: the client's answer.
public struct UAFSendResponse: Codable, Sendable, Equatable {
    /// uafResponse — the JSON text of the array of UAF responses.
    public var uafResponse: String
    public init(uafResponse: String) { self.uafResponse = uafResponse }
}

/// `TrustedFacets` — FIDO AppID and Facet Specification §3.1.2.
public struct UAFTrustedFacetList: Codable, Sendable, Equatable {
    public struct Entry: Codable, Sendable, Equatable {
        public var version: UAFVersion
        public var ids: [String]
    }
    public var trustedFacets: [Entry]

    public init(ids: [String]) { trustedFacets = [Entry(version: .supported, ids: ids)] }
}

/// UAF status codes — UAF Transport Binding §3.1.
public enum UAFStatusCode: Int, Codable, Sendable {
    case ok = 1200
    case accepted = 1202
    case badRequest = 1400
    case unauthorized = 1401
    case forbidden = 1403
    case notFound = 1404
    case requestTimeout = 1408
    case unknownAAID = 1480
    case unknownKeyID = 1481
    case channelBindingRefused = 1490
    case requestInvalid = 1491
    case unacceptableAuthenticator = 1492
    case revokedAuthenticator = 1493
    case unacceptableKey = 1494
    case unacceptableAlgorithm = 1495
    case unacceptableAttestation = 1496
    case unacceptableClientCapabilities = 1497
    case unacceptableContent = 1498
    case internalServerError = 1500
}

/// The SHA-256 of the base64url `fcParams` text, as `TAG_FINAL_CHALLENGE_HASH` carries it (UAF Protocol §3.4.6).
public enum UAFFinalChallenge {
    public static func hash(ofFCParams fcParams: String) -> [UInt8] { Array(SHA256.hash(data: Array(fcParams.utf8))) }
}
