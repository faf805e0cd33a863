// The native login API (docs: native-login.openapi.yaml).
extension NativeLoginEndpoint: EndpointGroup {
    var endpoints: [Endpoint] {
        [
            Endpoint(.post, "/login/native/start", body: .json, dialect: .api) { try await start($0, context: $1) },
            Endpoint(.post, "/login/native/scenario", body: .json, dialect: .api) { try await selectScenario($0, context: $1) },
            Endpoint(.post, "/login/native/username_password", body: .json, dialect: .api) { try await usernamePassword($0, context: $1) },
            Endpoint(.post, "/login/native/password", body: .json, dialect: .api) { try await password($0, context: $1) },
            Endpoint(.post, "/login/native/sms_code", body: .json, dialect: .api) { try await smsCode($0, context: $1) },
            Endpoint(.post, "/login/native/sms_code/resend", body: .json, dialect: .api) { try await resendCode($0, context: $1) },
        ]
    }
}
