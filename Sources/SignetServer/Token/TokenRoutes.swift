// The token endpoint (RFC 6749 §3.2).
extension TokenEndpoint: EndpointGroup {
    var endpoints: [Endpoint] { [Endpoint(.post, "/token", body: .form(required: true), dialect: .oauth) { try await handle($0, context: $1) }] }
}
