// Child processes for tests, started with posix_spawn.
//
// Written by hand: Foundation's `Process.run()` on Linux (this toolchain) reads each entry of
// /proc/self/fd by copying its whole 256-byte `d_name`, past the end of the directory buffer,
// and crashes the whole test process now and then (fixed upstream in swift-corelibs-foundation
// after this toolchain). swift-subprocess does it soundly but is asynchronous only, and the
// command tests run commands synchronously.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation
import Synchronization

/// A process started by a test: run to its end (``run(_:_:environment:input:errors:)``), or kept
/// running (a server) until the test ends it.
public final class ChildProcess: Sendable {
    /// Where a child's output goes.
    public enum Destination: Sendable {
        /// Discarded (`/dev/null`).
        case discard
        /// Written to this file, made (owner-only) or emptied first.
        case file(String)
        /// Into the same place as its standard output (for standard error).
        case standardOutput
    }

    /// What a child printed and how it ended.
    public struct Result: Sendable {
        /// Its exit status, or the number of the signal that ended it.
        public let status: Int32
        public let standardOutput: String
        public let standardError: String
    }

    public let processIdentifier: pid_t
    private let ended = Mutex<Int32?>(nil)

    private init(processIdentifier: pid_t) { self.processIdentifier = processIdentifier }

    /// Runs `executable` with `arguments` to its end: `input` on its standard input, its standard
    /// output read to the end, its standard error from a file (`errors`: a file, or with
    /// standard output).
    ///
    /// - Parameter environment: added to (and over) this process's environment.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], input: String? = nil, errors: Destination? = nil
    ) throws -> Result {
        var output: [Int32] = [0, 0]
        var inputPipe: [Int32] = [0, 0]
        // Close-on-exec, and children close every descriptor above 2 anyway (closeFromAction).
        guard pipe(&output) == 0, pipe(&inputPipe) == 0 else { throw ChildProcessError("pipe: \(errno)") }
        for fd in output + inputPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var errorFile: String?
        let errorDestination: Destination
        if let errors {
            errorDestination = errors
        } else {
            let file = try TestFolder.make("stderr", create: false).path
            errorFile = file
            errorDestination = .file(file)
        }
        defer { if let errorFile { unlink(errorFile) } }
        let child: ChildProcess
        do {
            child = try spawn(
                executable, arguments, environment: environment, base: nil, input: inputPipe[0], output: .descriptor(output[1]),
                errors: errorDestination)
        } catch {
            for fd in output + inputPipe { close(fd) }
            throw error
        }
        close(output[1])
        close(inputPipe[0])
        if let input {
            let bytes = Array(input.utf8)
            var written = 0
            while written < bytes.count {
                let count = bytes.withUnsafeBytes { write(inputPipe[1], $0.baseAddress! + written, $0.count - written) }
                if count <= 0 { break }
                written += count
            }
        }
        close(inputPipe[1])
        var printed = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(output[0], &buffer, buffer.count)
            if count > 0 { printed.append(contentsOf: buffer[0..<count]) } else if count == 0 || errno != EINTR { break }
        }
        close(output[0])
        let status = child.waitUntilExit()
        var standardError = ""
        if case .file(let path) = errorDestination, let data = FileManager.default.contents(atPath: path) {
            standardError = String(decoding: data, as: UTF8.self)
        }
        return Result(status: status, standardOutput: String(decoding: printed, as: UTF8.self), standardError: standardError)
    }

    /// Starts `executable` with `arguments` and leaves it running; its standard input is
    /// `/dev/null`.
    ///
    /// - Parameters:
    ///   - environment: added to (and over) `baseEnvironment`.
    ///   - baseEnvironment: the environment to start from; `nil`: this process's.
    public static func start(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], baseEnvironment: [String: String]? = nil,
        output: Destination = .discard, errors: Destination = .discard
    ) throws -> ChildProcess {
        try spawn(executable, arguments, environment: environment, base: baseEnvironment, input: nil, output: .destination(output), errors: errors)
    }

    /// Asks it to stop (SIGTERM).
    public func terminate() { _ = kill(processIdentifier, SIGTERM) }

    /// Sends it `signal` (SIGINT, SIGKILL, …).
    public func send(_ signal: Int32) { _ = kill(processIdentifier, signal) }

    /// Whether it has not ended yet.
    public var isRunning: Bool {
        ended.withLock { ended in
            if ended != nil { return false }
            var status: Int32 = 0
            let result = waitpid(processIdentifier, &status, WNOHANG)
            if result == processIdentifier { ended = Self.exitStatus(status) }
            return ended == nil && result == 0
        }
    }

    /// Waits for it to end: its exit status, or the number of the signal that ended it.
    @discardableResult
    public func waitUntilExit() -> Int32 {
        ended.withLock { ended in
            if let ended { return ended }
            var status: Int32 = 0
            while waitpid(processIdentifier, &status, 0) == -1, errno == EINTR {}
            let result = Self.exitStatus(status)
            ended = result
            return result
        }
    }

    /// Its exit status once ended (see ``waitUntilExit()``).
    public var terminationStatus: Int32 { waitUntilExit() }

    // MARK: spawning

    private enum Output {
        case descriptor(Int32)
        case destination(Destination)
    }

    private static func spawn(
        _ executable: String, _ arguments: [String], environment: [String: String], base: [String: String]?, input: Int32?, output: Output,
        errors: Destination
    ) throws -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let input {
            posix_spawn_file_actions_adddup2(&actions, input, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        switch output {
        case .descriptor(let fd): posix_spawn_file_actions_adddup2(&actions, fd, 1)
        case .destination(let destination): addDestination(destination, as: 1, to: &actions)
        }
        addDestination(errors, as: 2, to: &actions)
        // Nothing else of the test process leaks into the child (its servers' sockets).
        if let closeFrom = closeFromAction { _ = closeFrom(&actions, 3) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let merged = (base ?? ProcessInfo.processInfo.environment).merging(environment) { _, new in new }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else { throw ChildProcessError("cannot start \(executable): \(String(cString: strerror(result)))") }
        return ChildProcess(processIdentifier: pid)
    }

    private static func addDestination(_ destination: Destination, as fd: Int32, to actions: inout posix_spawn_file_actions_t) {
        switch destination {
        case .discard: posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_WRONLY, 0)
        case .file(let path): posix_spawn_file_actions_addopen(&actions, fd, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        case .standardOutput: posix_spawn_file_actions_adddup2(&actions, 1, fd)
        }
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34), looked up at run time: the
    /// Glibc module does not declare it.
    private static let closeFromAction: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32).self)
    }()

    /// An exit status, or the signal's number, from `waitpid`'s status.
    private static func exitStatus(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : signal
    }
}

/// A child process could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
