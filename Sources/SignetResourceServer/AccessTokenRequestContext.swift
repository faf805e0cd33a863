// The request context of a protected route: where the middleware leaves the verified token.
import Hummingbird
import SignetRelyingParty

/// A request context that can hold the ``SignetRelyingParty/VerifiedAccessToken`` of its request.
///
/// ``AccessTokenMiddleware`` sets ``accessToken`` before the route runs; a route reads it with
/// ``requireAccessToken()``. Add the property to your own context, or use
/// ``BasicAccessTokenRequestContext``.
public protocol AccessTokenRequestContext: RequestContext {
    /// The request's verified access token; `nil` until ``AccessTokenMiddleware`` has run.
    var accessToken: VerifiedAccessToken? { get set }
}

extension AccessTokenRequestContext {
    /// The verified access token.
    ///
    /// - Throws: 401 when no ``AccessTokenMiddleware`` verified this request: a route was added
    ///   outside the protected group. Failing closed keeps that mistake from serving anyone.
    public func requireAccessToken() throws -> VerifiedAccessToken {
        guard let accessToken else { throw HTTPError(.unauthorized, message: "no verified access token") }
        return accessToken
    }
}

/// The smallest ``AccessTokenRequestContext``: Hummingbird's core storage and the token.
public struct BasicAccessTokenRequestContext: AccessTokenRequestContext {
    public var coreContext: CoreRequestContextStorage
    public var accessToken: VerifiedAccessToken?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
    }
}
