// Swift concurrency's global executor on NIO's event loops, with jobs run as the runtime's own pool runs them.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation
import NIOCore
import NIOPosix

/// Sends the jobs Swift concurrency enqueues on its global executor to NIO's event loops: to the
/// current one when the job is enqueued from an event loop, else to the next.
///
/// Written by hand, after NIO's own
/// `NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()` and
/// through the same runtime hook (`swift_task_enqueueGlobal_hook`), for one difference. NIO runs
/// each job *as the event loop's serial executor*. Every later step of the task that asks for the
/// generic executor then counts as leaving that executor and is enqueued again: each
/// `withTaskCancellationHandler`, `TaskLocal.withValue` and Hummingbird middleware step, about 80
/// times per HTTP request. Here a job runs on the generic executor with no task executor, exactly
/// as the runtime's own thread pool runs it, and those steps run on in place.
///
/// What does not come through the hook: `Task.sleep`'s timer and `Task.yield`'s wake-up are
/// the runtime's (Dispatch); the task they resume comes back through the hook. Priorities are
/// not honoured, as with NIO's version.
enum EventLoopGlobalExecutor {
    private typealias EnqueueHook = @convention(thin) (UnownedJob, @convention(thin) (UnownedJob) -> Void) -> Void

    /// Installs the hook; `false` (and a line on standard error) when this toolchain is not one
    /// it was checked with, the runtime has no hook, or another hook is installed. Call once, at
    /// the start of `main`, before other tasks start: the store is a plain one.
    @discardableResult
    static func install() -> Bool {
        #if compiler(<6.4)
            guard MemoryLayout<UnownedSerialExecutor>.size == MemoryLayout<(UInt, UInt)>.size,
                let symbol = dlsym(dlopen(nil, RTLD_NOW), "swift_task_enqueueGlobal_hook")
            else { return refused("the runtime has no global executor hook") }
            let hook = symbol.assumingMemoryBound(to: EnqueueHook?.self)
            guard hook.pointee == nil else { return refused("another global executor hook is installed") }
            hook.pointee = { job, _ in
                // The generic executor: the runtime's ABI spells it as a null identity and no flags
                // (`SerialExecutorRef::generic()`), and no public initializer makes it.
                let generic = unsafeBitCast((UInt(0), UInt(0)), to: UnownedSerialExecutor.self)
                MultiThreadedEventLoopGroup.singleton.any().execute { job.runSynchronously(on: generic) }
            }
            return true
        #else
            return refused("this toolchain is newer than the one the hook was checked with")
        #endif
    }

    private static func refused(_ reason: String) -> Bool {
        FileHandle.standardError.write(Data("signet: tasks stay on Swift's thread pool: \(reason)\n".utf8))
        return false
    }
}
