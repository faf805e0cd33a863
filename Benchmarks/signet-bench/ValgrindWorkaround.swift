// Two faults of valgrind 3.19 (Debian 12's) that stop it from running `signet`, worked around for
// `signet-bench --callgrind` only. Nothing here runs in `signet serve`.
import ArgumentParser
import Foundation

/// What `signet-bench --callgrind` hands valgrind instead of the `signet` executable.
struct ValgrindWorkaround {
    /// A copy of this executable without its DWARF 5 debug sections, which valgrind 3.19's reader
    /// cannot parse ("unhandled dwarf2 abbrev form code 0x25", then it gives up). Symbols stay, so
    /// the profile still names every function.
    let executable: String
    /// A one-function library for `LD_PRELOAD`: an async `main` ends in libdispatch's
    /// `dispatch_main`, which parks the main thread with `sigsuspend` on a mask in read-only memory;
    /// valgrind's `sigsuspend` wrapper writes to the mask it is given and dies of SIGSEGV. The
    /// library's `sigsuspend` passes a copy on its stack to the same system call.
    let preload: String

    /// Writes both into `folder` with the machine's `objcopy` and C compiler, the copy from `signet`.
    static func prepare(in folder: URL, signet: URL) throws -> ValgrindWorkaround {
        let executable = folder.appendingPathComponent("signet-without-debug-info").path
        try run("objcopy", ["--strip-debug", signet.path, executable])
        let source = folder.appendingPathComponent("sigsuspend-copy.c")
        try sigsuspendCopy.write(to: source, atomically: true, encoding: .utf8)
        let preload = folder.appendingPathComponent("sigsuspend-copy.so").path
        try run("cc", ["-shared", "-fPIC", "-O2", source.path, "-o", preload])
        return ValgrindWorkaround(executable: executable, preload: preload)
    }

    private static let sigsuspendCopy = """
        #define _GNU_SOURCE
        #include <signal.h>
        #include <sys/syscall.h>
        #include <unistd.h>
        int sigsuspend(const sigset_t *mask) {
            sigset_t copy = *mask;
            return (int)syscall(SYS_rt_sigsuspend, &copy, (size_t)8);
        }

        """

    private static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ValidationError(
                "\(tool) \(arguments.joined(separator: " ")) failed (exit \(process.terminationStatus)); --callgrind needs objcopy and a C compiler")
        }
    }
}
