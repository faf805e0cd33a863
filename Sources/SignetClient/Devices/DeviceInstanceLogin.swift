// Step 1 and 2 of an activation: an instance id, and a login that carries it as its nonce.
import Foundation
import SignetCore

/// An instance id the provider handed out for the next activation (or reactivation).
public struct DeviceInstance: Sendable, Equatable, Codable {
    /// instance_id — goes into the login as its `nonce`; the ID token carries it back.
    public var id: String
    /// expires_in — seconds the id may be used for (600).
    public var expiresIn: Int

    public init(id: String, expiresIn: Int) {
        self.id = id
        self.expiresIn = expiresIn
    }

    enum CodingKeys: String, CodingKey {
        case id = "instance_id"
        case expiresIn = "expires_in"
    }
}

extension DeviceEnrolment {
    /// The scope a device login asks for: `device`, which activation needs.
    public static let scope = "device"

    /// `scope` with `openid` and `device` added when missing, in that order.
    public static func scope(including scope: String) -> String {
        var names = scope.split(separator: " ").map(String.init)
        for required in ["openid", Self.scope] where !names.contains(required) { names.append(required) }
        return names.joined(separator: " ")
    }

    /// Asks for an instance id: `POST /devices/instances` with the client id (no authentication;
    /// the provider limits how many an address gets).
    public func instanceID() async throws -> DeviceInstance {
        var form = FormParameters()
        form.append(OAuthParameter.clientID, client.configuration.clientID)
        let request = HTTPTransportRequest(
            method: "POST", url: try endpoint("/devices/instances"),
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")], body: Data(form.encoded.utf8))
        return try decode(DeviceInstance.self, from: try await send(request, presenting: nil))
    }

    /// A browser authorization request for a device login: `nonce` = the instance id, the scope
    /// with `openid` and `device`; open its URL and hand the redirect to
    /// ``SignetClient/redeem(redirect:request:)``, which checks the ID token carries the nonce.
    public func authorizationRequest(
        for instance: DeviceInstance, scope: String = "openid", acrValues: String? = nil, loginHint: String? = nil, prompt: String? = nil
    ) async throws -> AppAuthorizationRequest {
        try await client.makeAuthorizationRequest(
            scope: Self.scope(including: scope), acrValues: acrValues, loginHint: loginHint, prompt: prompt, nonce: instance.id)
    }

    /// The parameters of a native login (``NativeLogin/start(_:language:rememberToken:)``) for a
    /// device: `nonce` = the instance id, the scope with `openid` and `device`, fresh PKCE and state.
    public func authorizationParameters(for instance: DeviceInstance, scope: String = "openid", acrValues: String? = nil, uiLocales: String? = nil)
        -> AuthorizationParameters
    {
        AuthorizationParameters(
            clientID: client.configuration.clientID, redirectURI: client.configuration.redirectURI, scope: Self.scope(including: scope),
            acrValues: acrValues, uiLocales: uiLocales, nonce: instance.id, random: client.random)
    }

    /// Signs in through the browser for a device: ``SignetClient/signIn(agent:scope:acrValues:loginHint:prompt:nonce:)``
    /// with the instance id as the nonce and the scope `device`.
    public func signIn(
        agent: any ExternalUserAgent, for instance: DeviceInstance, scope: String = "openid", acrValues: String? = nil, loginHint: String? = nil
    ) async throws -> AuthTokens {
        try await client.signIn(agent: agent, scope: Self.scope(including: scope), acrValues: acrValues, loginHint: loginHint, nonce: instance.id)
    }
}
