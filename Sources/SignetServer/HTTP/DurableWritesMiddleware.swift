// Every answer waits until the writes made for it are on disk.
import Hummingbird
import SignetStore

/// Answers each request only once the writes made while handling it are on disk, with one flush
/// for all of them (``WriteDurabilityStore``) instead of one per write. An error answer waits too:
/// a refusal may have spent a code or counted a failure.
struct DurableWritesMiddleware<Context: RequestContext>: RouterMiddleware {
    let store: any WriteDurabilityStore

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try await store.durableWrites { try await next(request, context) }
    }
}
