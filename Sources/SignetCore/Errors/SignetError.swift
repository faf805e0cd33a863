// SignetError: the library error with a stable code.

/// An error raised by Signet's libraries.
///
/// Errors are equal when their codes are equal; the reason and the source
/// location are for people reading logs. Every code has a short, bounded
/// ``Code/label`` fit for metric labels and the audit log.
public struct SignetError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, extensible error code.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The short label, e.g. `invalid_configuration`.
        public let label: String
        public init(_ label: String) { self.label = label }
        public var description: String { label }

        /// A configuration value is missing or malformed. Final.
        public static let invalidConfiguration = Code("invalid_configuration")
        /// A message from the network could not be understood. Final for that message.
        public static let malformedMessage = Code("malformed_message")
        /// A network exchange failed before an answer arrived. Worth a retry.
        public static let transportFailure = Code("transport_failure")
        /// The server answered with an OAuth error; see ``SignetError/oauthError``. Final unless the OAuth error is `temporarily_unavailable`.
        public static let oauth = Code("oauth_error")
        /// A token or signature did not validate. Final.
        public static let invalidToken = Code("invalid_token")
        /// A stored record was not found. Final.
        public static let notFound = Code("not_found")
        /// A record conflicts with one already stored (duplicate name or id). Final.
        public static let conflict = Code("conflict")
        /// Storage failed. Worth a retry.
        public static let storageFailure = Code("storage_failure")
        /// The store cannot be reached now (a database restarting or unreachable): nothing was
        /// done. Worth a retry after a few seconds.
        public static let storageUnavailable = Code("storage_unavailable")
        /// A key could not be created, read or used. Final.
        public static let keyFailure = Code("key_failure")
        /// A fetch of a URL someone else controls was refused: it redirected, sent too much or took too long.
        /// Final until that server changes.
        public static let fetchRefused = Code("fetch_refused")
    }

    /// The stable code.
    public let code: Code
    /// What went wrong, for people. Never contains secrets.
    public let reason: String
    /// The OAuth wire error the server sent, when ``code`` is ``Code/oauth``.
    public let oauthError: OAuthError?
    public let file: String
    public let line: Int

    public init(_ code: Code, _ reason: String, oauthError: OAuthError? = nil, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.reason = reason
        self.oauthError = oauthError
        self.file = file
        self.line = line
    }

    public static func == (lhs: SignetError, rhs: SignetError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String {
        if let oauthError { return "\(code.label): \(reason) (\(oauthError.error): \(oauthError.errorDescription ?? ""))" }
        return "\(code.label): \(reason)"
    }
}
