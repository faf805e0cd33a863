// The README's protected-API example, compiled in CI so it never goes stale.
//
// A tiny API that accepts the access tokens a Signet provider issues for it: `GET /accounts`
// needs a DPoP-bound token (RFC 9449) for this API's audience (RFC 8707) with the scope
// `accounts`, and answers the caller's `sub` and `client_id`. Register the API's identifier
// as one of the client's resources at the provider, then run:
//
//   SIGNET_ISSUER=https://id.example.com API_AUDIENCE=https://api.example.com \
//   API_PUBLIC_URL=https://api.example.com API_PORT=8081 swift run ProtectedAPIExample
//
// Optional: API_HOST (default 127.0.0.1), API_ACCOUNTS_SCOPE (default accounts),
// API_REQUIRE_DPOP=false to accept bearer tokens too. Refusals are OAuth JSON errors with a
// WWW-Authenticate challenge (RFC 6750 §3, RFC 9449 §7.1).
import Foundation
import Hummingbird
import SignetCore

do {
    let configuration = try ProtectedAPIConfiguration(environment: ProcessInfo.processInfo.environment)
    let application = buildApplication(
        configuration: configuration, onServerRunning: { port in print("ProtectedAPIExample listening on port \(port)") })
    try await application.runService()
} catch let error as SignetError {
    print("ProtectedAPIExample: \(error.reason)")
    exit(2)
} catch {
    print("ProtectedAPIExample: \(error)")
    exit(1)
}
