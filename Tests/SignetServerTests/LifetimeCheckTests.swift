import SignetServer
import Testing

@Suite("Configured lifetimes that a stored record can hold")
struct LifetimeCheckTests {
    @Test("the defaults pass; an infinite, undefined or absurdly long lifetime is named")
    func unstorableLifetimes() {
        #expect(SignetConfiguration().unstorableLifetime == nil)
        var configuration = SignetConfiguration()
        configuration.loginPageLifetime = .infinity
        #expect(configuration.unstorableLifetime == "loginPageLifetime")
        configuration = SignetConfiguration()
        configuration.refreshTokenLifetime = .nan
        #expect(configuration.unstorableLifetime == "refreshTokenLifetime")
        configuration = SignetConfiguration()
        configuration.sms.lifetime = 1e306
        #expect(configuration.unstorableLifetime == "sms.lifetime")
        configuration = SignetConfiguration()
        configuration.rememberTokenLifetime = SignetConfiguration.longestLifetime
        #expect(configuration.unstorableLifetime == nil)
        configuration.rememberTokenLifetime = SignetConfiguration.longestLifetime + 1
        #expect(configuration.unstorableLifetime == "rememberTokenLifetime")
    }
}
