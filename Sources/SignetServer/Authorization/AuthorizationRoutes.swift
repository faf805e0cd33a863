// The authorization endpoint (a page) and pushed authorization requests (RFC 9126).
extension AuthorizeEndpoint: EndpointGroup {
    var endpoints: [Endpoint] {
        [
            Endpoint(.get, "/authorize", dialect: .page, changesState: true) { try await handle($0, context: $1) },
            Endpoint(.post, "/authorize", dialect: .page) { try await handle($0, context: $1) },
        ]
    }
}

extension PushedAuthorizationEndpoint: EndpointGroup {
    var endpoints: [Endpoint] { [Endpoint(.post, "/par", body: .form(required: true), dialect: .oauth) { try await handle($0, context: $1) }] }
}
