// Serving the native login API's OpenAPI document, kept beside the code as native-login.openapi.yaml.
import Foundation
import Hummingbird

/// The OpenAPI document of the native login API.
enum NativeLoginOpenAPI {
    /// The document's text, read once from the module's resources.
    static let document: String? = Bundle.module.url(forResource: "native-login.openapi", withExtension: "yaml")
        .flatMap { try? String(contentsOf: $0, encoding: .utf8) }

    static func response() -> Response {
        guard let document else { return Response(status: .notFound) }
        return Response(status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: document)))
    }
}
