// The OpenAPI documents Signet serves, read from the module's resources.
import Foundation
import Hummingbird
import NIOCore

/// An OpenAPI document bundled with the module.
struct OpenAPIDocument: Sendable {
    /// The document's text, read once.
    let text: String?

    init(resource name: String) {
        text = Bundle.module.url(forResource: name, withExtension: "yaml").flatMap { try? String(contentsOf: $0, encoding: .utf8) }
    }

    /// The native login API (`/login/native/openapi.yaml`).
    static let nativeLogin = OpenAPIDocument(resource: "native-login.openapi")
    /// The admin API (`/admin/openapi.yaml` on the admin listener).
    static let admin = OpenAPIDocument(resource: "admin.openapi")

    func response() -> Response {
        guard let text else { return Response(status: .notFound) }
        return Response(status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
