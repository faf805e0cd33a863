// The settings of FIDO UAF authenticators.
import Foundation

/// How long UAF requests live, how many authenticators a device may hold, and the PIN schedule.
public struct AuthenticatorPolicy: Sendable, Equatable {
    /// How long a UAF request (its challenge and serverData) may be answered. Default 120 s, at most 120 s.
    public var requestLifetime: TimeInterval = 120
    /// Authenticators one device may hold. Default 3 (seed 002: up to three methods).
    public var maximumPerDevice: Int = 3
    /// The wait after the n-th wrong PIN in a row (seed 002: none, none, 60 s, 180 s).
    public var pinCoolDowns: [TimeInterval] = [0, 0, 60, 180]
    /// The wrong PINs in a row that remove a PIN authenticator. Default 5.
    public var pinMaximumFailures: Int = 5

    public init() {}

    var problems: [String] {
        var problems: [String] = []
        if requestLifetime < 10 || requestLifetime > 120 { problems.append("the UAF request lifetime must be 10–120 s") }
        if !(1...10).contains(maximumPerDevice) { problems.append("authenticators per device must be 1–10") }
        if !(1...20).contains(pinMaximumFailures) { problems.append("the wrong PINs before removal must be 1–20") }
        if pinCoolDowns.contains(where: { $0 < 0 }) { problems.append("PIN cool-downs cannot be negative") }
        // Every failure from the third up to the last before removal must wait, or guesses run free.
        if pinMaximumFailures > 3, (3..<pinMaximumFailures).contains(where: { coolDown(after: $0) <= 0 }) {
            problems.append("every wrong PIN from the 3rd to the \(pinMaximumFailures - 1)th needs a cool-down")
        }
        return problems
    }

    /// The wait after `failures` wrong PINs in a row.
    func coolDown(after failures: Int) -> TimeInterval {
        failures >= 1 && failures <= pinCoolDowns.count ? pinCoolDowns[failures - 1] : 0
    }
}
