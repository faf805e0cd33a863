// FIDO UAF: facets, registration, deregistration, PIN change, removal.
extension AuthenticatorEndpoints: EndpointGroup {
    var endpoints: [Endpoint] {
        [
            Endpoint(.get, "/uaf/facets/:client_id", dialect: .oauth) { try await facets($0, context: $1) },
            Endpoint(.post, "/uaf/registration/request", body: .json, dialect: .oauth) { try await registrationRequest($0, context: $1) },
            Endpoint(.post, "/uaf/registration/response", body: .json, dialect: .oauth) { try await registrationResponse($0, context: $1) },
            Endpoint(.post, "/uaf/deregistration", body: .json, dialect: .oauth) { try await deregistration($0, context: $1) },
            Endpoint(.post, "/uaf/pin/change/request", body: .json, dialect: .oauth) { try await pinChangeRequest($0, context: $1) },
            Endpoint(.post, "/uaf/pin/change/response", body: .json, dialect: .oauth) { try await pinChangeResponse($0, context: $1) },
            Endpoint(.delete, "/devices/:instance_id/authenticators/:key_id", dialect: .oauth) { try await remove($0, context: $1) },
        ]
    }
}
