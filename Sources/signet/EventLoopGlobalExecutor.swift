// Swift concurrency's global executor on NIO's event loops, with jobs run as generic-executor jobs.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix

/// Sends the jobs Swift concurrency would give its global thread pool to NIO's event loops, the
/// current one when the job is enqueued from an event loop.
///
/// Written by hand, after NIO's own
/// `NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()` and
/// through the same runtime hook, for one difference: NIO runs each job *as the event loop's serial
/// executor*, so every later step of the task that asks for the generic executor (each
/// `withTaskCancellationHandler`, `TaskLocal.withValue` and Hummingbird middleware call in a
/// request) counts as leaving that executor and is enqueued again — about 80 times per request.
/// Here a job runs as what it is, a job of the generic executor, and those steps run on.
enum EventLoopGlobalExecutor {
    private typealias EnqueueHook = @convention(thin) (UnownedJob, @convention(thin) (UnownedJob) -> Void) -> Void

    /// Installs the hook; `false` when the runtime has none or another hook is installed. Call
    /// once, at start, before starting tasks: jobs enqueued earlier stay on the standard pool.
    @discardableResult
    static func install() -> Bool {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "swift_task_enqueueGlobal_hook") else { return false }
        let hook = symbol.assumingMemoryBound(to: EnqueueHook?.self)
        guard hook.pointee == nil else { return false }
        hook.pointee = { job, _ in
            MultiThreadedEventLoopGroup.singleton.any().execute {
                job.runSynchronously(on: globalConcurrentExecutor.asUnownedTaskExecutor())
            }
        }
        return true
    }
}
