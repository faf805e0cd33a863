// The user claims each scope releases, in ID tokens and at /userinfo.
import SignetCore
import SignetStore

/// The user claims each scope releases — OIDC Core §5.4.
enum UserClaims {
    static func apply(_ user: UserRecord, scopes: Set<String>, to claims: inout IDTokenClaims) {
        if scopes.contains("profile") {
            claims.name = user.name
            claims.preferredUsername = user.username
        }
        if scopes.contains("email") { claims.email = user.email }
        if scopes.contains("phone") { claims.phoneNumber = user.phoneNumber }
    }

    /// The userinfo response body for these scopes.
    static func userInfo(_ user: UserRecord, scopes: Set<String>) -> [String: String] {
        var body = ["sub": user.id]
        if scopes.contains("profile") {
            body["preferred_username"] = user.username
            body["name"] = user.name
        }
        if scopes.contains("email") { body["email"] = user.email }
        if scopes.contains("phone") { body["phone_number"] = user.phoneNumber }
        return body
    }
}
