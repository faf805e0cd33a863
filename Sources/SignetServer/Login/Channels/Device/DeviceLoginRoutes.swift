// A login with an activated device's UAF authenticator (MEPi biometric login).
extension DeviceLoginEndpoint: EndpointGroup {
    var endpoints: [Endpoint] {
        [
            Endpoint(.post, "/login/device/start", body: .json, dialect: .oauth) { try await start($0, context: $1) },
            Endpoint(.post, "/login/device/finish", body: .json, dialect: .oauth) { try await finish($0, context: $1) },
        ]
    }
}
