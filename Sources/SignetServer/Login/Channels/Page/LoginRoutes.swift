// The hosted login page's forms.
extension LoginPage: EndpointGroup {
    var endpoints: [Endpoint] {
        [
            Endpoint(.post, "/login", dialect: .page) { try await submit($0, context: $1) },
            Endpoint(.post, "/login/sms", dialect: .page) { try await submitCode($0, context: $1) },
            Endpoint(.post, "/login/sms/resend", dialect: .page) { try await resend($0, context: $1) },
            Endpoint(.post, "/login/continue", dialect: .page) { try await continueAs($0, context: $1) },
        ]
    }
}
