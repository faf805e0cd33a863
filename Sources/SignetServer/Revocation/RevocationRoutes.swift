// The revocation endpoint (RFC 7009 §2).
extension RevocationEndpoint: EndpointGroup {
    var endpoints: [Endpoint] { [Endpoint(.post, "/revoke", body: .form(required: true), dialect: .oauth) { try await handle($0, context: $1) }] }
}
