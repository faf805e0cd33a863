// How long what a grant issues lives: the provider's settings, and a client's own where it has them.
import Foundation
import SignetStore

/// The lifetimes of an authorization's code, its tokens and its refresh tokens.
///
/// The provider's are settings (`tokens.…`, docs/configuration.md); a client may override any of
/// them (``ClientRecord/accessTokenLifetime`` and its neighbours, `clients update
/// --access-token-lifetime …`), as Keycloak's and Hydra's per-client lifespans do. Every value,
/// the provider's and a client's, stays within ``bounds``.
public struct TokenLifetimes: Sendable, Equatable {
    /// `exp` of an access token (RFC 9068 §2.2), and `expires_in` at `/token`.
    public var accessToken: TimeInterval
    /// `exp` of an ID token (OIDC Core §2).
    public var idToken: TimeInterval
    /// How long one refresh token may go unused before it must be rotated.
    public var refreshTokenIdle: TimeInterval
    /// How long a grant lasts however often it is refreshed: no refresh token outlives it.
    public var refreshTokenAbsolute: TimeInterval
    /// How long an authorization code may wait for its redemption (RFC 6749 §4.1.2).
    public var code: TimeInterval

    public init(
        accessToken: TimeInterval, idToken: TimeInterval, refreshTokenIdle: TimeInterval, refreshTokenAbsolute: TimeInterval, code: TimeInterval
    ) {
        (self.accessToken, self.idToken, self.refreshTokenIdle, self.refreshTokenAbsolute, self.code) =
            (accessToken, idToken, refreshTokenIdle, refreshTokenAbsolute, code)
    }

    /// One lifetime: its name in settings and client metadata, and what it may be.
    public struct Limit: Sendable {
        /// The camel-case name: `tokens.<name>` as a setting, the client's property.
        public let name: String
        /// The snake-case name of the admin API's client metadata.
        public let metadataName: String
        public let keyPath: any WritableKeyPath<TokenLifetimes, TimeInterval> & Sendable
        public let clientKeyPath: any WritableKeyPath<ClientRecord, TimeInterval?> & Sendable
        /// The least and the most, in seconds.
        public let bounds: ClosedRange<TimeInterval>
    }

    /// Every lifetime with its bounds. An access or ID token lives at most a day (a retired key
    /// stays published that long after its last signature); a code at most 60 s (what codes
    /// protect is lost when one lingers: RFC 6749 §4.1.2 asks for a short life, FAPI 2.0 §5.3.2.1
    /// for at most 60 s); a refresh token goes unused at most a year, and a grant lasts at most
    /// ten years.
    public static let limits: [Limit] = [
        Limit(
            name: "accessTokenLifetime", metadataName: "access_token_lifetime", keyPath: \.accessToken, clientKeyPath: \.accessTokenLifetime,
            bounds: 60...86_400),
        Limit(name: "idTokenLifetime", metadataName: "id_token_lifetime", keyPath: \.idToken, clientKeyPath: \.idTokenLifetime, bounds: 60...86_400),
        Limit(
            name: "refreshTokenIdleLifetime", metadataName: "refresh_token_idle_lifetime", keyPath: \.refreshTokenIdle,
            clientKeyPath: \.refreshTokenIdleLifetime, bounds: 60...(365 * 86_400)),
        Limit(
            name: "refreshTokenAbsoluteLifetime", metadataName: "refresh_token_absolute_lifetime", keyPath: \.refreshTokenAbsolute,
            clientKeyPath: \.refreshTokenAbsoluteLifetime, bounds: 60...(3_650 * 86_400)),
        Limit(name: "codeLifetime", metadataName: "code_lifetime", keyPath: \.code, clientKeyPath: \.codeLifetime, bounds: 10...60),
    ]

    /// These lifetimes with `client`'s own in place of the provider's.
    public func overridden(by client: ClientRecord) -> TokenLifetimes {
        var effective = self
        for limit in Self.limits {
            if let own = client[keyPath: limit.clientKeyPath] { effective[keyPath: limit.keyPath] = own }
        }
        return effective
    }

    /// Why these lifetimes cannot be used, one sentence each naming the value as `prefix` + its
    /// name (`tokens.accessTokenLifetime`); empty when they can.
    public func problems(prefix: String) -> [String] {
        var problems = Self.limits.compactMap { limit -> String? in
            let value = self[keyPath: limit.keyPath]
            guard !limit.bounds.contains(value) else { return nil }
            return "\(prefix)\(limit.name) must be \(Self.words(limit.bounds)), not \(Self.words(value))"
        }
        if refreshTokenIdle > refreshTokenAbsolute {
            problems.append("\(prefix)refreshTokenIdleLifetime must not be longer than \(prefix)refreshTokenAbsoluteLifetime")
        }
        return problems
    }

    /// Why `client`'s own lifetimes cannot be used; empty when they can. Each is checked against
    /// its bounds, and an idle lifetime against the client's own absolute one (against the
    /// provider's, a refresh token simply ends with its grant).
    public static func problems(of client: ClientRecord) -> [String] {
        var problems: [String] = []
        for limit in limits {
            guard let value = client[keyPath: limit.clientKeyPath], !limit.bounds.contains(value) else { continue }
            problems.append("\(limit.metadataName) must be \(words(limit.bounds)), not \(words(value))")
        }
        if let idle = client.refreshTokenIdleLifetime, let absolute = client.refreshTokenAbsoluteLifetime, idle > absolute {
            problems.append("refresh_token_idle_lifetime must not be longer than refresh_token_absolute_lifetime")
        }
        return problems
    }

    static func words(_ bounds: ClosedRange<TimeInterval>) -> String { "\(words(bounds.lowerBound))–\(words(bounds.upperBound))" }

    static func words(_ seconds: TimeInterval) -> String {
        seconds.isFinite && seconds == seconds.rounded() && abs(seconds) < 1e15 ? "\(Int(seconds)) s" : "\(seconds) s"
    }
}
