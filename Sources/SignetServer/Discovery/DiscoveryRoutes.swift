// The provider's public documents and health probes.
import Hummingbird
import NIOCore

extension DiscoveryEndpoint: EndpointGroup {
    var endpoints: [Endpoint] {
        [
            Endpoint(.get, "/.well-known/openid-configuration", dialect: .page) { try await configuration($0, context: $1) },
            Endpoint(.get, "/jwks", dialect: .page) { try await jwks($0, context: $1) },
            Endpoint(.get, "/login/native/openapi.yaml", dialect: .page) { _, _ in OpenAPIDocument.nativeLogin.response() },
            Endpoint(.get, "/assets/signet.css", dialect: .page) { _, _ in PageRenderer.stylesheet() },
        ]
    }
}

extension HealthEndpoints: EndpointGroup {
    var endpoints: [Endpoint] {
        [
            Endpoint(.get, "/health", dialect: .page) { _, _ in
                Response(status: .ok, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "ok")))
            },
            Endpoint(.get, "/health/live", dialect: .page) { try await live($0, context: $1) },
            Endpoint(.get, "/health/ready", dialect: .page) { try await ready($0, context: $1) },
        ]
    }
}
