// `signet authenticator …` and `signet authenticators …` against a real `signet serve --dev-tls` process.
import Foundation
import SignetScript
import SignetTesting
import Testing

@Suite("The authenticator commands: enroll, login, wrong PINs, change-pin, the helpdesk's list and remove")
struct AuthenticatorCommandTests {
    @Test("an installation enrolls a PIN, logs in without a password, is counted for wrong PINs, changes its PIN; the helpdesk lists and removes it")
    func authenticatorLifecycle() async throws {
        let data = try SignetCommand.dataFolder()
        let port = try FreePort.find()
        let server = try await DeviceCommandTests.serve(data: data, port: port, extra: ["--dev-tls"], scheme: "https")
        defer { DeviceCommandTests.stop(server) }
        let folder = data + "/phone"
        func run(_ arguments: [String], input: String? = nil) throws -> SignetCommand.Output {
            try SignetCommand.run(arguments + ["--data-dir", data, "--folder", folder], input: input)
        }
        func authenticator(_ arguments: [String], input: String? = nil) throws -> SignetCommand.Output {
            try run(["authenticator"] + arguments + ["--pin-rounds", "1000"], input: input)
        }
        #expect(try run(["device", "activate"]).status == 0)

        let enrolled = try authenticator(["enroll", "--pin-stdin"], input: "4711\n")
        #expect(enrolled.status == 0, "\(enrolled.all)")
        #expect(enrolled.stdout.contains("Registered F1D0#1001 (iOS PIN)"))
        let sealed = try Data(contentsOf: URL(fileURLWithPath: folder + "/authenticators.sealed"))
        #expect(!String(decoding: sealed, as: UTF8.self).contains("F1D0"), "the authenticators file is sealed")

        let login = try authenticator(["login", "--pin", "4711"])
        #expect(login.status == 0, "\(login.all)")
        #expect(
            login.stdout.contains("acr urn:signet:loa:2, amr swk pin mfa"), "enrolled after password and SMS; no attested device key: \(login.stdout)"
        )
        let confirmed = try authenticator(["login", "--pin", "4711", "--transaction", "Pay 10 EUR to Bob"])
        #expect(confirmed.stdout.contains("Confirming: Pay 10 EUR to Bob"), "\(confirmed.all)")

        let first = try authenticator(["login", "--pin", "0000"])
        #expect(first.status == 4)
        #expect(first.stdout.contains("Wrong PIN: 4 tries left"), "\(first.stdout)")
        let changedWrong = try authenticator(["change-pin", "--pin", "1111", "--new-pin", "2468"])
        #expect(changedWrong.stdout.contains("Wrong PIN: 3 tries left"), "a wrong old PIN counts too: \(changedWrong.all)")
        let changed = try authenticator(["change-pin", "--pin", "4711", "--new-pin", "2468"])
        #expect(changed.stdout.contains("PIN changed."), "\(changed.all)")
        #expect(try authenticator(["login", "--pin", "2468"]).status == 0, "the new PIN logs in")
        _ = try authenticator(["login", "--pin", "1"])
        _ = try authenticator(["login", "--pin", "2"])
        let third = try authenticator(["login", "--pin", "3"])
        #expect(third.stdout.contains("wait 60 s"), "\(third.stdout)")
        let cooling = try authenticator(["login", "--pin", "2468"])
        #expect(cooling.stdout.contains("Too many wrong PINs: wait"), "the app refuses during the cool-down: \(cooling.stdout)")
        let listed = try authenticator(["list"])
        #expect(listed.stdout.contains("last attempt failed: 2 tries left"), "\(listed.all)")
        #expect(listed.stdout.contains("The provider lists 1 for this device."))

        let helpdesk = try SignetCommand.run(["authenticators", "list", "demo", "--data-dir", data])
        #expect(helpdesk.stdout.contains("F1D0#1001 iOS PIN") && helpdesk.stdout.contains("PIN failures 3"), "\(helpdesk.all)")
        let removed = try SignetCommand.run(["authenticators", "remove", "demo", "--all", "--reason", "user called", "--data-dir", data])
        #expect(removed.stdout.contains("Removed 1 authenticator(s)"), "\(removed.all)")
        let events = try SignetCommand.run(["devices", "events", "demo", "--data-dir", data]).stdout
        for kind in ["authenticator.registered", "authenticator.pin_changed", "authenticator.removed"] {
            #expect(events.contains(kind), "\(kind) in \(events)")
        }

        let gone = try authenticator(["login", "--pin", "2468"])
        #expect(gone.status != 0)
        #expect(gone.all.contains("signet authenticator enroll"), "a clear way back: \(gone.all)")
    }
}
