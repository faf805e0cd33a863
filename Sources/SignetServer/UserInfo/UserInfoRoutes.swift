// The UserInfo endpoint (OIDC Core §5.3): GET, HEAD (as GET without content) and POST.
extension UserInfoEndpoint: EndpointGroup {
    var endpoints: [Endpoint] {
        [
            Endpoint(.get, "/userinfo", dialect: .oauth) { try await handle($0, context: $1) },
            Endpoint(.head, "/userinfo", dialect: .oauth) { try await handle($0, context: $1) },
            Endpoint(.post, "/userinfo", body: .form(required: false), dialect: .oauth) { try await handle($0, context: $1) },
        ]
    }
}
