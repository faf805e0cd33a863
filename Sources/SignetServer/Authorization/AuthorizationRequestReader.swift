// Reading an authorization request however it arrives, through one path for every endpoint.
import Foundation
import SignetCore

/// Turns the parameters a client sent into a checked request: a pushed `request_uri`
/// (RFC 9126) or a signed request object (RFC 9101) replaces them, the one
/// ``AuthorizationRequestValidator`` checks the result, and `id_token_hint` is verified.
/// `/authorize`, `/par` and the native login start all read requests here.
struct AuthorizationRequestReader: Sendable {
    let ownTokens: OwnTokenVerifier
    let validator: AuthorizationRequestValidator
    let pushedRequests: PushedRequests
    let requestObjects: RequestObjectReader

    /// Where the parameters come from.
    enum Source: Sendable {
        /// The front channel (`/authorize`): may name a pushed request.
        case frontChannel
        /// `/par`, from an authenticated client.
        case pushed
        /// The native login start.
        case native
    }

    /// The decision, and the parameters it was made on (after a pushed request or a request
    /// object replaced the ones sent).
    struct Read: Sendable {
        var decision: AuthorizationRequestDecision
        var parameters: FormParameters
        var signed: Bool
    }

    func read(_ sent: FormParameters, from source: Source) async throws -> Read {
        var parameters = sent, pushed = source == .pushed, signed = false
        if source == .frontChannel {
            switch try await pushedRequests.resolve(parameters) {
            case .refused(let error): return Read(decision: .showError(error), parameters: sent, signed: false)
            case .parameters(let resolved, let wasPushed, let wasSigned): (parameters, pushed, signed) = (resolved, wasPushed, wasSigned)
            }
        }
        if !signed {
            switch try await requestObjects.read(parameters) {
            case .refused(let error): return Read(decision: .showError(error), parameters: parameters, signed: false)
            case .parameters(let read, let wasSigned): (parameters, signed) = (read, wasSigned)
            }
        }
        var decision = try await validator.validate(parameters, pushed: pushed, signed: signed)
        if case .valid(var request, let client) = decision, let hint = parameters[OAuthParameter.idTokenHint] {
            if let claims = await ownTokens.idTokenHint(hint) {
                request.idTokenHintSubject = claims.sub
                decision = .valid(request, client)
            } else {
                decision = .redirectError(
                    OAuthError(.invalidRequest, "id_token_hint is not an ID token issued here"), redirectURI: request.redirectURI,
                    state: request.state)
            }
        }
        return Read(decision: decision, parameters: parameters, signed: signed)
    }
}
