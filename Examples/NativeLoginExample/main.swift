// The README's native-login example, compiled in CI so it never goes stale.
//
//   swift run NativeLoginExample <issuer> <client_id> <redirect_uri> <username> <password>
//
// Signs in with username, password and (when the server asks) the SMS code read from stdin.
import Foundation
import SignetClient

let arguments = CommandLine.arguments
guard arguments.count == 6 else {
    print("usage: NativeLoginExample <issuer> <client_id> <redirect_uri> <username> <password>")
    exit(2)
}

let client = SignetClient(configuration: .init(issuer: arguments[1], clientID: arguments[2], redirectURI: arguments[3]))
let parameters = AuthorizationParameters(clientID: arguments[2], redirectURI: arguments[3], scope: "openid profile")

do {
    var step = try await client.nativeLogin().start(parameters)
    loop: while true {
        switch step.kind {
        case .selectScenario(let scenarios):
            step = try await step.select(scenario: scenarios.first(where: \.isTwoFactor) ?? scenarios[0])
        case .usernamePassword:
            step = try await step.submit(username: arguments[4], password: arguments[5], rememberMe: true)
        case .password:
            step = try await step.submit(password: arguments[5])
        case .smsCode(let sms):
            print("Code sent to \(sms.phoneHint). Enter it:")
            step = try await step.submit(code: readLine() ?? "")
        case .finished(let result):
            let tokens = try await result.exchange()
            print("Signed in. Access token expires in \(tokens.expiresIn ?? 0) s.")
            break loop
        }
    }
} catch let error as SignetClientError {
    print("Sign-in failed: \(error) (\(error.isRetryable ? "retryable" : "final"))")
    exit(1)
}
