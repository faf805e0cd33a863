// A phone with FIDO UAF authenticators in tests: the SDK's UAFClient over a TestDevice's mutual TLS.
import Crypto
import CryptoExtras
import Foundation
import SignetClient
import SignetCore
import SignetScript
import SignetTesting

/// One authenticator the test phone registered: its key, KeyID, PIN derivation and counter.
final class TestAuthenticator: @unchecked Sendable {
    let aaid: String
    let keyID: [UInt8]
    let signer: any UAFSigner
    var pin: PINKeyDerivation?
    var counter: UInt32 = 0
    var keyIDText: String { Data(keyID).base64URLEncodedString() }

    init(aaid: String, der: Bool = true) {
        self.aaid = aaid
        self.keyID = (0..<32).map { _ in UInt8.random(in: 0...255) }
        self.signer = SoftwareUAFSigner(der: der)
    }

    /// An authenticator whose key is `signer` (an Android one's RSA key, say).
    init(aaid: String, signer: any UAFSigner) {
        self.aaid = aaid
        self.keyID = (0..<32).map { _ in UInt8.random(in: 0...255) }
        self.signer = signer
    }

    /// Another authenticator with `other`'s KeyID and key, claiming `aaid`: a lying or confused one.
    init(aaid: String, keyOf other: TestAuthenticator) {
        self.aaid = aaid
        self.keyID = other.keyID
        self.signer = other.signer
        self.counter = other.counter
    }

    /// The next counter value (a real counter, so a replayed or cloned one is caught).
    func nextCounter() -> UInt32 {
        counter += 1
        return counter
    }
}

/// A software RSA-2048 UAuth key, as Android Keystore authenticators hold: its public key as
/// `ALG_KEY_RSA_2048_RAW` (the modulus, then the exponent in as many bytes as it takes: 259 in
/// all for 65537), its signatures RSASSA-PSS or PKCS#1 v1.5 with SHA-256, raw.
struct TestRSAUAFSigner: UAFSigner {
    let key: _RSA.Signing.PrivateKey
    let signatureAlgorithm: UAFSignatureAlgorithm
    let publicKey: [UInt8]
    var publicKeyFormat: UAFPublicKeyFormat { .rsa2048Raw }

    /// - Parameter publicKey: the bytes to declare instead of the key's own (for malformed keys).
    init(key: _RSA.Signing.PrivateKey, algorithm: UAFSignatureAlgorithm = .rsaSSAPSSSHA256Raw, publicKey: [UInt8]? = nil) throws {
        self.key = key
        self.signatureAlgorithm = algorithm
        let primitives = try key.publicKey.getKeyPrimitives()
        self.publicKey = publicKey ?? Array(primitives.modulus) + Array(primitives.publicExponent)
    }

    func sign(_ data: [UInt8]) throws -> [UInt8] {
        Array(try key.signature(for: data, padding: signatureAlgorithm == .rsaSSAPSSSHA256Raw ? .PSS : .insecurePKCS1v1_5).rawRepresentation)
    }
}

/// An activated test device that speaks UAF through the SDK's ``UAFClient``.
struct TestUAFPhone: Sendable {
    static let facet = "ios:bundle-id:dev.signet.wallet"
    /// Few PBKDF2 rounds, so tests stay fast; the derivation is the same.
    static let rounds = 1000

    let provider: TestProvider
    let device: TestDevice
    let client = UAFClient(facetID: TestUAFPhone.facet)

    func postJSON(_ path: String, _ body: String, token: String? = nil, browser: ScriptedBrowser? = nil) async throws -> ScriptedResponse {
        var headers = [("Content-Type", "application/json")]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        return try await (browser ?? device.browser).send("POST", provider.url(path), body: body, headers: headers)
    }

    static func envelope(_ response: ScriptedResponse) throws -> UAFReturnRequest { try response.decode(UAFReturnRequest.self) }

    static func send(_ uafResponse: String) throws -> String {
        String(decoding: try JSONEncoder().encode(UAFSendResponse(uafResponse: uafResponse)), as: UTF8.self)
    }

    /// `POST /uaf/registration/request` with `token`.
    func registrationRequest(token: String) async throws -> ScriptedResponse {
        try await postJSON("/uaf/registration/request", "{}", token: token)
    }

    /// The registration response text for a request, by `authenticator` (with `pin` for a PIN one).
    func registrationResponse(_ request: UAFReturnRequest, _ authenticator: TestAuthenticator, pin: String?) async throws -> String {
        var pinKey: [UInt8]?
        if let pin {
            let (derivation, key) = try PINKeyDerivation.enrol(pin: pin, rounds: Self.rounds)
            authenticator.pin = derivation
            pinKey = Array(key.publicKey.x963Representation)
        }
        return try await client.register(
            try UAFClient.registrationRequest(request), aaid: authenticator.aaid, keyID: authenticator.keyID, signer: authenticator.signer,
            signCounter: authenticator.counter, pinKey: pinKey)
    }

    /// Registers `authenticator` end to end; the registration response's HTTP answer.
    func register(_ authenticator: TestAuthenticator, pin: String? = nil, token: String) async throws -> ScriptedResponse {
        let request = try await registrationRequest(token: token)
        guard request.status == 200 else { return request }
        let text = try await registrationResponse(try Self.envelope(request), authenticator, pin: pin)
        return try await postJSON("/uaf/registration/response", try Self.send(text))
    }

    /// `POST /login/device/start` for `authorization` (its `/authorize` parameters as JSON members).
    func startLogin(_ authorization: TestAuthorization, extra: [String: String] = [:]) async throws -> ScriptedResponse {
        var fields = Dictionary(authorization.parameters().map { ($0.0, $0.1) }, uniquingKeysWith: { $1 })
        fields.merge(extra) { $1 }
        return try await postJSON("/login/device/start", String(decoding: try JSONEncoder().encode(fields), as: UTF8.self))
    }

    /// The authentication response text for a started login's (or PIN change's) request.
    func assertion(
        _ request: UAFReturnRequest, _ authenticator: TestAuthenticator, pin: String? = nil, confirm: Bool = true, counter: UInt32? = nil,
        newPIN: String? = nil
    ) async throws -> String {
        let parsed = try UAFClient.authenticationRequest(request)
        let shown = confirm ? parsed.transaction?.first.flatMap { Data(base64URLEncoded: $0.content) }.map { Array($0) } : nil
        var pinKey: P256.Signing.PrivateKey?
        if let pin, let derivation = authenticator.pin { pinKey = try derivation.key(for: pin) }
        var newPINKey: [UInt8]?
        if let newPIN {
            let (derivation, key) = try PINKeyDerivation.enrol(pin: newPIN, rounds: Self.rounds)
            authenticator.pin = derivation
            newPINKey = Array(key.publicKey.x963Representation)
        }
        return try await client.authenticate(
            parsed, aaid: authenticator.aaid, keyID: authenticator.keyID, signer: authenticator.signer,
            signCounter: counter ?? authenticator.nextCounter(),
            transactionShown: shown, pinKey: pinKey, newPINKey: newPINKey)
    }

    /// `POST /login/device/finish` with a response text.
    func finish(_ text: String, browser: ScriptedBrowser? = nil) async throws -> ScriptedResponse {
        try await postJSON("/login/device/finish", try Self.send(text), browser: browser)
    }

    /// A whole device login: start, sign (PIN when given), finish; the finish's answer.
    func login(_ authorization: TestAuthorization, _ authenticator: TestAuthenticator, pin: String? = nil, counter: UInt32? = nil) async throws
        -> ScriptedResponse
    {
        let start = try await startLogin(authorization)
        guard start.status == 201 else { return start }
        return try await finish(try await assertion(try Self.request(fromStart: start), authenticator, pin: pin, counter: counter))
    }

    struct StartAnswer: Decodable {
        let uafRequest: UAFReturnRequest
        enum CodingKeys: String, CodingKey { case uafRequest = "uaf_request" }
    }

    static func request(fromStart start: ScriptedResponse) throws -> UAFReturnRequest {
        try JSONDecoder().decode(StartAnswer.self, from: Data(start.body.utf8)).uafRequest
    }
}
