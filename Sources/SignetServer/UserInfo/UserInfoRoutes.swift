// The UserInfo endpoint (OIDC Core §5.3): GET (and so HEAD, as every GET endpoint) and POST.
extension UserInfoEndpoint: EndpointGroup {
    var endpoints: [Endpoint] {
        [
            Endpoint(.get, "/userinfo", dialect: .oauth) { try await handle($0, context: $1) },
            Endpoint(.post, "/userinfo", body: .form(required: false), dialect: .oauth) { try await handle($0, context: $1) },
        ]
    }
}
