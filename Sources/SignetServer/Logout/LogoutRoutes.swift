// RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0 §2), a page.
extension LogoutEndpoint: EndpointGroup {
    var endpoints: [Endpoint] {
        [
            Endpoint(.get, "/logout", dialect: .page, changesState: true) { try await handle($0, context: $1) },
            Endpoint(.post, "/logout", dialect: .page) { try await handle($0, context: $1) },
        ]
    }
}
