import ArgumentParser
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Play an app and its backend against a running server.")
    func run() async throws {}
}
