// The login session's JSON written and read member by member: a login reads and writes it at
// every step (authorize, the login page, each submission), and `Codable` was the largest cost of
// those requests after bcrypt (docs/performance.md). The `Codable` conformances stay the
// definition of the JSON; the storage tests compare the two, every member set.
import SignetCore

// Members in sorted order, as the store's encoder writes records; dates as milliseconds since 1970.

extension LoginSessionRecord: JSONObjectWritable {
    public func writeJSON(into object: inout JSONObjectWriter) {
        object.member("browser_binding_hash", browserBindingHash)
        object.member("channel", channel.rawValue)
        object.member("checking_until", millisecondsOf: checkingUntil)
        object.member("csrf_token", csrfToken)
        object.member("device_instance_id", deviceInstanceID)
        object.member("expires_at", millisecondsOf: expiresAt)
        object.member("id", id)
        object.member("language", language)
        object.member("offered_session_sid", offeredSessionSID)
        object.member("password_attempts", passwordAttempts)
        object.member("remember_me", rememberMe)
        object.member("remembered", remembered)
        object.member("request", request)
        object.member("scenario", scenario?.rawValue)
        object.member("sms", sms)
        object.member("step", step.rawValue)
        object.member("user_id", userID)
        object.member("user_stamp", userStamp)
        object.member("version", version)
    }
}

extension LoginSessionRecord: JSONObjectReadable {
    public init(members: JSONObjectMembers) throws(JSONObjectMembers.Unplain) {
        id = try members.string("id")
        channel = try members.rawValue("channel", as: Channel.self)
        request = try ValidatedAuthorizationRequest(members: members.object("request"))
        browserBindingHash = try members.stringIfPresent("browser_binding_hash")
        csrfToken = try members.stringIfPresent("csrf_token")
        step = try members.rawValue("step", as: LoginStep.self)
        scenario = try members.rawValueIfPresent("scenario", as: LoginScenario.self)
        userID = try members.stringIfPresent("user_id")
        userStamp = try members.stringIfPresent("user_stamp")
        remembered = try members.bool("remembered")
        rememberMe = try members.bool("remember_me")
        passwordAttempts = try members.int("password_attempts")
        checkingUntil = try members.dateIfPresent(millisecondsIn: "checking_until")
        sms = try members.objectIfPresent("sms").map { (nested) throws(JSONObjectMembers.Unplain) in try SMSChallenge(members: nested) }
        offeredSessionSID = try members.stringIfPresent("offered_session_sid")
        language = try members.stringIfPresent("language")
        deviceInstanceID = try members.stringIfPresent("device_instance_id")
        expiresAt = try members.date(millisecondsIn: "expires_at")
        version = try members.int("version")
    }
}

extension SMSChallenge: JSONObjectWritable {
    public func writeJSON(into object: inout JSONObjectWriter) {
        object.member("attempts", attempts)
        object.member("code_digest", codeDigest)
        object.member("delivery_failed", deliveryFailed)
        object.member("expires_at", millisecondsOf: expiresAt)
        object.member("last_sent_at", millisecondsOf: lastSentAt)
        object.member("phone_number", phoneNumber)
        object.member("sends", sends)
    }
}

extension SMSChallenge: JSONObjectReadable {
    public init(members: JSONObjectMembers) throws(JSONObjectMembers.Unplain) {
        codeDigest = try members.string("code_digest")
        phoneNumber = try members.string("phone_number")
        expiresAt = try members.date(millisecondsIn: "expires_at")
        attempts = try members.int("attempts")
        sends = try members.int("sends")
        lastSentAt = try members.date(millisecondsIn: "last_sent_at")
        deliveryFailed = try members.bool("delivery_failed")
    }
}

extension ValidatedAuthorizationRequest: JSONObjectWritable {
    public func writeJSON(into object: inout JSONObjectWriter) {
        object.member("acrValues", acrValues)
        object.member("appLaunchURL", appLaunchURL)
        object.member("clientID", clientID)
        object.member("codeChallenge", codeChallenge)
        object.member("dpopJKT", dpopJKT)
        object.member("idTokenHintSubject", idTokenHintSubject)
        object.member("instanceID", instanceID)
        object.member("loginHint", loginHint)
        object.member("maxAge", maxAge)
        object.member("minimumACR", minimumACR)
        object.member("nonce", nonce)
        object.member("prompt", prompt)
        object.member("redirectURI", redirectURI)
        object.member("resources", resources)
        object.member("returnByLink", returnByLink)
        object.member("scope", scope)
        object.member("state", state)
        object.member("uiLocales", uiLocales)
    }
}

extension ValidatedAuthorizationRequest: JSONObjectReadable {
    public init(members: JSONObjectMembers) throws(JSONObjectMembers.Unplain) {
        clientID = try members.string("clientID")
        redirectURI = try members.string("redirectURI")
        scope = try members.string("scope")
        state = try members.stringIfPresent("state")
        nonce = try members.stringIfPresent("nonce")
        codeChallenge = try members.string("codeChallenge")
        prompt = try members.strings("prompt")
        maxAge = try members.intIfPresent("maxAge")
        loginHint = try members.stringIfPresent("loginHint")
        acrValues = try members.strings("acrValues")
        uiLocales = try members.strings("uiLocales")
        idTokenHintSubject = try members.stringIfPresent("idTokenHintSubject")
        minimumACR = try members.stringIfPresent("minimumACR")
        returnByLink = try members.boolIfPresent("returnByLink")
        appLaunchURL = try members.stringIfPresent("appLaunchURL")
        dpopJKT = try members.stringIfPresent("dpopJKT")
        resources = try members.stringsIfPresent("resources")
        instanceID = try members.stringIfPresent("instanceID")
    }
}
