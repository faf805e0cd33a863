// The token endpoint under a load that costs the benchmark almost nothing: requests made beforehand.
import Foundation
import SignetCore
import SignetRelyingParty
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Token requests made before the row and sent as bytes, so the load generator's own work per
/// request is a `send`, a `recv` and a check of the answer.
///
/// The `code` row's client (``RelyingParty``, as a service's backend would use it) costs about as
/// much CPU per request as the server. On a machine whose CPUs the two share, or with the server
/// on CPUs of its own (`--isolate`), that client is what limits the rate, and the server idles
/// between requests; a server under more load than it can take, as a provider's is at its
/// busiest, does more per wake-up. These requests are the relying-party kit's own: each was
/// built by ``RelyingParty/exchangeCode(_:pending:)`` (a fresh client assertion, PKCE), which
/// sent it to a transport that kept it instead of sending it.
enum PreparedTokenRequests {
    /// One worker's requests, as the bytes of HTTP/1.1 requests on a keep-alive connection.
    typealias Queue = PreparedQueue<Request>

    /// A request's bytes and when its client assertion was signed.
    struct Request: Sendable {
        let bytes: [UInt8]
        let made: ContinuousClock.Instant
    }

    /// How old a request may be when it is sent: its assertion lives 60 s from signing
    /// (``RelyingParty``), so a worker stops at the first request older than this, with no error.
    static let freshFor = Duration.seconds(50)

    /// Builds one request per code in `codes` through `backend`'s own code exchange. The client
    /// assertions are signed at the real time (the builder is a relying party of its own over
    /// `backend`'s configuration, with the default clock).
    static func make(codes: [PreparedCodes.Queue], backend: RelyingParty, hostAndPort: String) async throws -> [Queue] {
        let document = try await backend.discover()
        let keeper = KeepingTransport(tokenEndpoint: document.tokenEndpoint, passingOn: backend.transport)
        // The backend's own clock: the assertions are signed at the time the provider keeps.
        let builder = backend.using(keeper)
        _ = try await builder.discover()
        var queues: [Queue] = []
        for queue in codes {
            var requests: [Request] = []
            while let code = queue.next() {
                _ = try await builder.exchangeCode(code, pending: queue.pending)
                guard let request = keeper.takeKept() else { throw SignetError(.malformedMessage, "the code exchange sent no token request") }
                requests.append(Request(bytes: try bytes(of: request, host: hostAndPort), made: .now))
            }
            queues.append(Queue(requests))
        }
        return queues
    }

    /// Sends `queue`'s requests one after another on a connection of its own, from a thread of
    /// its own, until `deadline`, the end of the queue or a request older than ``freshFor``, and
    /// checks every answer: status 200 and a JSON token response with an access token, an ID
    /// token and a refresh token.
    static func send(_ queue: Queue, port: Int, until deadline: ContinuousClock.Instant, firstError: FirstErrorReport) async -> WorkerTiming {
        await withCheckedContinuation { continuation in
            Thread {
                var timing = WorkerTiming(reportingFirstErrorTo: firstError)
                do {
                    let connection = try BlockingHTTPConnection(port: port)
                    // At least one request, as the other rows make.
                    repeat {
                        guard let request = queue.next(), ContinuousClock.now - request.made < freshFor else { break }
                        let begin = ContinuousClock.now
                        let answer = try connection.exchange(request.bytes)
                        if answer.status == 200, isTokenResponse(answer.body) {
                            timing.succeeded(since: begin)
                        } else {
                            timing.failed(
                                SignetError(.malformedMessage, "status \(answer.status): \(String(decoding: answer.body.prefix(200), as: UTF8.self))")
                            )
                        }
                    } while timing.goesOn(until: deadline)
                } catch {
                    // The connection is lost: this worker stops, and that counts.
                    timing.failed(error)
                }
                continuation.resume(returning: timing)
            }.start()
        }
    }

    /// Whether `body` is a JSON object with string members access_token, id_token and refresh_token.
    static func isTokenResponse(_ body: ArraySlice<UInt8>) -> Bool {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else { return false }
        return ["access_token", "id_token", "refresh_token"].allSatisfy { (object[$0] as? String)?.isEmpty == false }
    }

    /// `request` as HTTP/1.1 bytes for a keep-alive connection to `host`.
    static func bytes(of request: HTTPTransportRequest, host: String) throws -> [UInt8] {
        guard let url = URLComponents(string: request.url), !url.percentEncodedPath.isEmpty else {
            throw SignetError(.malformedMessage, "the token endpoint \(request.url) has no path")
        }
        let target = url.percentEncodedPath + (url.percentEncodedQuery.map { "?" + $0 } ?? "")
        let body = request.body ?? Data()
        var head = "\(request.method) \(target) HTTP/1.1\r\nHost: \(host)\r\n"
        for header in request.headers where header.name.lowercased() != "content-length" { head += "\(header.name): \(header.value)\r\n" }
        head += "Content-Length: \(body.count)\r\n\r\n"
        return Array(head.utf8) + Array(body)
    }

    /// A transport that keeps the token request instead of sending it, answers it with a
    /// minimal token response, and sends everything else (discovery) on.
    final class KeepingTransport: HTTPTransport {
        private let tokenEndpoint: String
        private let next: any HTTPTransport
        private let kept = Mutex<HTTPTransportRequest?>(nil)

        init(tokenEndpoint: String, passingOn next: any HTTPTransport) { (self.tokenEndpoint, self.next) = (tokenEndpoint, next) }

        func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
            guard request.url == tokenEndpoint else { return try await next.send(request) }
            kept.withLock { $0 = request }
            return HTTPTransportResponse(
                status: 200, headers: [("Content-Type", "application/json")], body: Data(#"{"access_token":"kept","token_type":"Bearer"}"#.utf8))
        }

        /// The request kept since the last call, if any.
        func takeKept() -> HTTPTransportRequest? { kept.withLock { $0.take() } }
    }
}

/// One keep-alive HTTP/1.1 connection on a blocking socket, for a worker thread of its own.
///
/// Written by hand, not with a library's client: the point is a client whose cost per request is
/// a system call each way, and it only has to read the answers Signet's server writes (a
/// `Content-Length` body, no chunking). Each read and write gives up after 30 s, so a server
/// that stops answering fails the row instead of stalling it.
final class BlockingHTTPConnection {
    private let socket: Int32
    private var buffer: [UInt8] = []

    /// The longest head and body read, beyond which the answer is refused.
    static let largestHead = 65_536
    static let largestBody = 16 << 20

    /// Connects to `127.0.0.1:port`.
    init(port: Int) throws {
        #if canImport(Glibc)
            socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        let failure = errno
        guard socket >= 0 else { throw SignetError(.transportFailure, "socket() failed (errno \(failure))") }
        var on: Int32 = 1
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        _ = setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        #if canImport(Darwin)
            // A write to a connection the server reset must be an error, not SIGPIPE (Linux: MSG_NOSIGNAL).
            _ = setsockopt(socket, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let failure = errno
            close(socket)
            throw SignetError(.transportFailure, "connect() failed (errno \(failure))")
        }
    }

    deinit { close(socket) }

    /// Sends `request` and reads the whole answer: its status and body.
    func exchange(_ request: [UInt8]) throws -> (status: Int, body: ArraySlice<UInt8>) {
        try sendAll(request)
        let headEnd = try readUntilHeadEnds()
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        let statusLine = lines.first?.split(separator: " ") ?? []
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw SignetError(.malformedMessage, "no HTTP status line") }
        let lengthLine = lines.dropFirst().first { $0.lowercased().hasPrefix("content-length:") }
        guard let length = lengthLine.flatMap({ Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }),
            (0...Self.largestBody).contains(length)
        else { throw SignetError(.malformedMessage, "an answer without a usable Content-Length") }
        let bodyStart = headEnd + 4
        while buffer.count < bodyStart + length { try readMore() }
        let body = buffer[bodyStart..<(bodyStart + length)]
        buffer.removeSubrange(..<(bodyStart + length))
        return (status, body)
    }

    private func sendAll(_ bytes: [UInt8]) throws {
        #if canImport(Glibc)
            let flags = Int32(MSG_NOSIGNAL)
        #else
            let flags: Int32 = 0
        #endif
        try bytes.withUnsafeBytes { raw in
            var sent = 0
            while sent < raw.count {
                let count = send(socket, raw.baseAddress! + sent, raw.count - sent, flags)
                let failure = errno
                if count < 0, failure == EINTR { continue }
                guard count > 0 else {
                    throw SignetError(.transportFailure, count == 0 ? "the connection took no bytes" : "send() failed (errno \(failure))")
                }
                sent += count
            }
        }
    }

    /// The offset of the `\r\n\r\n` that ends the head, reading until it has arrived.
    private func readUntilHeadEnds() throws -> Int {
        var searchFrom = 0
        while true {
            if buffer.count >= 4 {
                for index in searchFrom...(buffer.count - 4)
                where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 { return index }
                searchFrom = buffer.count - 3
            }
            guard buffer.count <= Self.largestHead else {
                throw SignetError(.malformedMessage, "an answer's head longer than \(Self.largestHead) bytes")
            }
            try readMore()
        }
    }

    private func readMore() throws {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress!, $0.count, 0) }
            let failure = errno
            if count < 0, failure == EINTR { continue }
            guard count > 0 else {
                throw SignetError(
                    .transportFailure,
                    count == 0
                        ? "the server closed the connection" : "recv() failed (errno \(failure)\(failure == EAGAIN ? ": no answer in 30 s" : ""))")
            }
            buffer += chunk[..<count]
            return
        }
    }
}
