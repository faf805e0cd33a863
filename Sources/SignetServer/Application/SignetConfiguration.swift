// The provider's settings, with documented defaults.
import Foundation
import SignetCore
import SignetStore

/// Everything that can be set about a running provider.
///
/// A plain value with safe defaults; the `signet` command fills it from flags
/// and `SIGNET_…` environment variables.
public struct SignetConfiguration: Sendable {
    /// The public URL of the provider (`iss`), without a trailing slash. Default `http://127.0.0.1:8080`.
    public var issuer: String
    /// Address to listen on. Default `127.0.0.1`.
    public var host: String
    /// Port to listen on; 0 picks a free one. Default 8080.
    public var port: Int
    /// Use `http://host:boundPort` as the issuer once bound (for servers on port 0 in tests). Default false.
    public var issuerFollowsBoundPort: Bool = false
    /// Proxies whose `Forwarded` / `X-Forwarded-For` headers are believed (CIDR networks).
    /// With none, the TCP peer is the client. Plain HTTP on a non-loopback address is allowed
    /// only with trusted proxies and an https issuer (the proxy terminates TLS).
    public var trustedProxies: [IPNetwork] = []
    /// The header the trusted proxies name the client in (only that one is read). Default `X-Forwarded-For`.
    public var forwardedHeader: ForwardedHeader = .xForwardedFor
    /// PEM files for TLS. Without them the server speaks plain HTTP, which is allowed on loopback
    /// only, or behind trusted proxies (see ``trustedProxies``).
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?

    /// How long an authorization code lives (`tokens.codeLifetime`). 10–60 s. Default 60 s.
    public var authorizationCodeLifetime: TimeInterval
    /// How long an access token lives (`tokens.accessTokenLifetime`). 1 minute to a day. Default 10 minutes.
    public var accessTokenLifetime: TimeInterval
    /// How long an ID token lives (`tokens.idTokenLifetime`). 1 minute to a day. Default 10 minutes.
    public var idTokenLifetime: TimeInterval
    /// How long one refresh token may go unused before it must be rotated
    /// (`tokens.refreshTokenIdleLifetime`). 1 minute to a year. Default 30 days.
    public var refreshTokenLifetime: TimeInterval
    /// How long a grant lasts however often it is refreshed (`tokens.refreshTokenAbsoluteLifetime`).
    /// 1 minute to ten years, no shorter than the idle lifetime. Default 90 days.
    public var grantLifetime: TimeInterval
    /// How long a browser stays signed in. Default 12 hours.
    public var browserSessionLifetime: TimeInterval
    /// How long the hosted login page waits for the user. Default 10 minutes.
    public var loginPageLifetime: TimeInterval
    /// The furthest ahead a client assertion's `exp` may be (RFC 7523 §3). Default 5 minutes.
    public var maxClientAssertionLifetime: TimeInterval
    /// Clock skew allowed on incoming assertions. Default 30 s.
    public var clockSkew: TimeInterval

    /// bcrypt cost (log2 rounds) for new password hashes. Default 12.
    public var passwordHashCost: Int
    /// SMS one-time code rules.
    public var sms: SMSPolicy = SMSPolicy()
    /// How long a Remember-User-ID token names its user. Default 365 days.
    public var rememberTokenLifetime: TimeInterval = 365 * 86_400
    /// How failed sign-ins slow down and pause.
    public var throttle: ThrottlePolicy

    /// How often the key ring rereads keys from storage (to pick up rotations by another process). Default 60 s.
    public var keyRefreshInterval: TimeInterval
    /// When the signing keys rotate by themselves (`keys.rotationDays`, `keys.announceDays`).
    /// Default: every 90 days, each key published 7 days before it signs.
    public var keyRotation = KeyRotationPolicy()
    /// How often the keys are checked for a rotation due. Default an hour.
    public var keyRotationCheckInterval: TimeInterval = 3_600
    /// How often expired records are removed. Default 10 minutes.
    public var cleanupInterval: TimeInterval

    /// Whether every client must push its authorization requests (RFC 9126 §5). Default false;
    /// a client can also be required to on its own (`ClientRecord.requirePushedAuthorizationRequests`).
    public var requirePushedAuthorizationRequests: Bool = false
    /// How long device client certificates are valid (issue 8): 90 days.
    public var deviceCertificateValidity: TimeInterval = 90 * 24 * 3600
    /// How long an initial certificate (before the first login, MEPi) is valid. Default 5 minutes.
    public var initialCertificateValidity: TimeInterval = 300
    /// How long before its certificate expires a device is told to reactivate. Default 14 days.
    public var reactivationWindow: TimeInterval = 14 * 24 * 3600
    /// The header a trusted proxy passes the client certificate in (URL-encoded PEM, as nginx's
    /// `$ssl_client_escaped_cert`); read only from a peer in ``trustedProxies``. Default none.
    public var clientCertificateHeader: String?
    /// How old a DPoP proof's `iat` may be (RFC 9449 §11.1). Default 60 s.
    public var dpopProofLifetime: TimeInterval = 60
    /// Whether DPoP proofs must carry a server-provided nonce (RFC 9449 §8). Default false.
    public var dpopNonces: Bool = false
    /// How long a pushed request's `request_uri` may be used (at most 60 s). Default 60 s.
    public var pushedRequestLifetime: TimeInterval = 60
    /// FIDO UAF authenticators (issue 9): request lifetime, authenticators per device, the PIN schedule.
    public var authenticators: AuthenticatorPolicy = AuthenticatorPolicy()

    /// The largest request body accepted. Default 64 KiB.
    public var maxBodySize: Int
    /// The longest single parameter value accepted. Default 4096 bytes.
    public var maxParameterLength: Int
    /// How much fetching a client's `jwks_uri` may cost: default at most 64 KiB and 5 s, and never a redirect (``SafeFetch``).
    public var jwksFetch: FetchLimits = FetchLimits()

    public init(
        issuer: String = "http://127.0.0.1:8080",
        host: String = "127.0.0.1",
        port: Int = 8080,
        tlsCertificatePath: String? = nil,
        tlsKeyPath: String? = nil,
        authorizationCodeLifetime: TimeInterval = 60,
        accessTokenLifetime: TimeInterval = 600,
        idTokenLifetime: TimeInterval = 600,
        refreshTokenLifetime: TimeInterval = 30 * 86_400,
        grantLifetime: TimeInterval = 90 * 86_400,
        browserSessionLifetime: TimeInterval = 12 * 3_600,
        loginPageLifetime: TimeInterval = 600,
        maxClientAssertionLifetime: TimeInterval = 300,
        clockSkew: TimeInterval = 30,
        passwordHashCost: Int = 12,
        throttle: ThrottlePolicy = ThrottlePolicy(),
        keyRefreshInterval: TimeInterval = 60,
        cleanupInterval: TimeInterval = 600,
        maxBodySize: Int = 64 * 1024,
        maxParameterLength: Int = 4096
    ) {
        self.issuer = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        self.host = host
        self.port = port
        self.tlsCertificatePath = tlsCertificatePath
        self.tlsKeyPath = tlsKeyPath
        self.authorizationCodeLifetime = min(authorizationCodeLifetime, 60)
        self.accessTokenLifetime = accessTokenLifetime
        self.idTokenLifetime = idTokenLifetime
        self.refreshTokenLifetime = refreshTokenLifetime
        self.grantLifetime = grantLifetime
        self.browserSessionLifetime = browserSessionLifetime
        self.loginPageLifetime = loginPageLifetime
        self.maxClientAssertionLifetime = maxClientAssertionLifetime
        self.clockSkew = clockSkew
        self.passwordHashCost = passwordHashCost
        self.throttle = throttle
        self.keyRefreshInterval = keyRefreshInterval
        self.cleanupInterval = cleanupInterval
        self.maxBodySize = maxBodySize
        self.maxParameterLength = maxParameterLength
    }

    /// The first lifetime that is not a finite number of seconds of at most a century, by name;
    /// `nil` when all are. Such a lifetime would put a date no JSON number can hold in a stored
    /// record, so ``buildApplication(configuration:store:clock:random:logger:messageSender:attestationVerifier:boundIssuer:metrics:onServerRunning:)`` refuses it at start.
    public var unstorableLifetime: String? {
        storedLifetimes.first { !$0.seconds.isFinite || abs($0.seconds) > Self.longestLifetime }?.name
    }

    /// The longest lifetime a configuration may give (a century).
    public static let longestLifetime: TimeInterval = 100 * 365 * 86_400

    /// The lifetimes that become dates in stored records, by name.
    var storedLifetimes: [(name: String, seconds: TimeInterval)] {
        [
            ("authorizationCodeLifetime", authorizationCodeLifetime), ("accessTokenLifetime", accessTokenLifetime),
            ("idTokenLifetime", idTokenLifetime), ("refreshTokenLifetime", refreshTokenLifetime), ("grantLifetime", grantLifetime),
            ("browserSessionLifetime", browserSessionLifetime), ("loginPageLifetime", loginPageLifetime),
            ("maxClientAssertionLifetime", maxClientAssertionLifetime), ("rememberTokenLifetime", rememberTokenLifetime),
            ("deviceCertificateValidity", deviceCertificateValidity), ("initialCertificateValidity", initialCertificateValidity),
            ("reactivationWindow", reactivationWindow), ("dpopProofLifetime", dpopProofLifetime), ("pushedRequestLifetime", pushedRequestLifetime),
            ("sms.lifetime", sms.lifetime),
        ]
    }

    /// The token lifetimes every client has unless it has its own (``TokenLifetimes``).
    public var tokenLifetimes: TokenLifetimes {
        TokenLifetimes(
            accessToken: accessTokenLifetime, idToken: idTokenLifetime, refreshTokenIdle: refreshTokenLifetime, refreshTokenAbsolute: grantLifetime,
            code: authorizationCodeLifetime)
    }

    /// How long a retired key stays published: the longest token it can have signed, plus the time
    /// servers may go on signing with it before they reread keys, plus clock skew.
    public var retiredKeyPublicationTime: TimeInterval { max(accessTokenLifetime, idTokenLifetime) + keyRefreshInterval + clockSkew }

    /// The same, counting the longer access and ID token lifetimes some of `clients` have.
    public func retiredKeyPublicationTime(clients: [ClientRecord]) -> TimeInterval {
        let longest = clients.map { max($0.accessTokenLifetime ?? 0, $0.idTokenLifetime ?? 0) }.max() ?? 0
        return max(retiredKeyPublicationTime, longest + keyRefreshInterval + clockSkew)
    }

    /// Checks the settings and says what is wrong, in words an operator can act on.
    /// Whether client certificates can reach the provider: its own TLS, or a trusted proxy's header.
    public var acceptsClientCertificates: Bool { tlsCertificatePath != nil || clientCertificateHeader != nil }

    public func problems() -> [String] {
        var problems: [String] = []
        if let url = URL(string: issuer), let scheme = url.scheme?.lowercased(), let host = url.host {
            if scheme == "http", !Loopback.isHost(host) {
                problems.append("issuer \(issuer) uses http on a host that is not loopback; use https (TLS is required outside loopback)")
            }
            if scheme != "http" && scheme != "https" { problems.append("issuer \(issuer) must be an http(s) URL") }
            if url.query != nil || url.fragment != nil { problems.append("issuer must not have a query or fragment") }
        } else {
            problems.append("issuer '\(issuer)' is not a URL")
        }
        if (tlsCertificatePath == nil) != (tlsKeyPath == nil) {
            problems.append("--tls-certificate and --tls-key go together")
        }
        if tlsCertificatePath == nil, !Loopback.isHost(host), trustedProxies.isEmpty || !issuer.lowercased().hasPrefix("https://") {
            problems.append(
                "listening on \(host) without TLS: give --tls-certificate and --tls-key, or run behind a TLS-terminating proxy named with --trusted-proxy and an https --issuer"
            )
        }
        if let header = clientCertificateHeader {
            if trustedProxies.isEmpty {
                problems.append("--client-certificate-header needs --trusted-proxy (the header is read only from trusted proxies)")
            }
            if header.isEmpty || !header.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) {
                problems.append("--client-certificate-header must be a header name (letters, digits, '-')")
            }
        }
        if initialCertificateValidity < 60 || initialCertificateValidity > 3600 {
            problems.append("the initial certificate validity must be 60–3600 s")
        }
        // A CA lives five years and is replaced with two certificate lifetimes left (DeviceAuthorities).
        if deviceCertificateValidity < 86_400 || deviceCertificateValidity > 825 * 86_400 {
            problems.append("the device certificate validity must be 1 to 825 days")
        }
        if reactivationWindow < 0 || reactivationWindow >= deviceCertificateValidity {
            problems.append("the reactivation window must be shorter than the device certificate validity")
        }
        problems += authenticators.problems
        problems += tokenLifetimes.problems(prefix: "tokens.")
        if let period = keyRotation.rotationPeriod, !(86_400...(3_650 * 86_400)).contains(period) {
            problems.append("keys.rotationDays must be 1–3650 days (or 0: by hand only)")
        }
        if !(0...(365 * 86_400)).contains(keyRotation.announcement) { problems.append("keys.announceDays must be 0–365 days") }
        if !(4...31).contains(passwordHashCost) { problems.append("password hash cost must be 4–31 (bcrypt), got \(passwordHashCost)") }
        if !(0...65_535).contains(port) { problems.append("port must be 0–65535, got \(port)") }
        return problems
    }
}

/// How failed sign-ins slow down and then pause, per account name and per source address.
///
/// The first `freeFailures` failures cost nothing; after that each attempt must wait
/// `baseDelay × 2^(extra failures)`, capped at `maxDelay`, so guessing slows to a crawl
/// but an account is never locked for longer than `maxDelay`. Counters reset after a
/// success (per account) or after `window` without failures.
public struct ThrottlePolicy: Sendable, Equatable {
    public var freeFailuresPerAccount: Int
    public var freeFailuresPerAddress: Int
    public var baseDelay: TimeInterval
    public var maxDelay: TimeInterval
    public var window: TimeInterval
    /// Passwords one login may try before it must start again. Default 10.
    public var passwordAttemptsPerLogin: Int = 10

    public init(
        freeFailuresPerAccount: Int = 5, freeFailuresPerAddress: Int = 20, baseDelay: TimeInterval = 30, maxDelay: TimeInterval = 900,
        window: TimeInterval = ThrottleRecord.retention
    ) {
        self.freeFailuresPerAccount = freeFailuresPerAccount
        self.freeFailuresPerAddress = freeFailuresPerAddress
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.window = window
    }

    /// How long after the last failure the next attempt must wait, given the failures counted.
    public func pause(afterFailures failures: Int, free: Int) -> TimeInterval {
        guard failures >= free else { return 0 }
        let doublings = min(failures - free, 20)
        return min(baseDelay * pow(2, Double(doublings)), maxDelay)
    }
}

/// The rules of SMS one-time codes.
public struct SMSPolicy: Sendable, Equatable {
    /// Digits in a code. Default 6.
    public var digits: Int
    /// How long a code works. Default 5 minutes.
    public var lifetime: TimeInterval
    /// Wrong tries per code; after them the code is dead (resend or restart). Default 3.
    public var maxWrongAttempts: Int
    /// The shortest time between sends. Default 30 s.
    public var resendAfter: TimeInterval
    /// The most codes sent in one login (the first and the resends). Default 5.
    public var maxSends: Int
    /// Wrong codes per account across all its logins within ``accountWrongCodeWindow``; then the
    /// SMS step waits until the oldest leaves the window (a right password does not reset it). Default 10.
    public var maxWrongCodesPerAccount: Int
    /// Default 24 hours.
    public var accountWrongCodeWindow: TimeInterval
    /// Codes sent per account across all its logins within ``accountSendWindow``. Default 10.
    public var maxSendsPerAccount: Int
    /// Default 1 hour.
    public var accountSendWindow: TimeInterval

    public init(
        digits: Int = 6, lifetime: TimeInterval = 300, maxWrongAttempts: Int = 3, resendAfter: TimeInterval = 30, maxSends: Int = 5,
        maxWrongCodesPerAccount: Int = 10, accountWrongCodeWindow: TimeInterval = 86_400, maxSendsPerAccount: Int = 10,
        accountSendWindow: TimeInterval = 3_600
    ) {
        self.digits = digits
        self.lifetime = lifetime
        self.maxWrongAttempts = maxWrongAttempts
        self.resendAfter = resendAfter
        self.maxSends = maxSends
        self.maxWrongCodesPerAccount = maxWrongCodesPerAccount
        self.accountWrongCodeWindow = accountWrongCodeWindow
        self.maxSendsPerAccount = maxSendsPerAccount
        self.accountSendWindow = accountSendWindow
    }
}
