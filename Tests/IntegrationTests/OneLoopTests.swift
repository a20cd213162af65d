// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
@testable import Bluetooth
import Concurrency
import Foundation
import Glibc
@testable import HTTPKit
import LinkKit
import Testing
import WebSocket

/// The descriptors glassd waits on are served by one thread, the event loop's: a link's
/// sockets, curl's transfers and WebSockets side by side add no thread of their own. (Bus
/// connections keep a thread each: see `BusLoop`.)
@Suite("One event loop", .timeLimit(.minutes(2)))
struct OneLoopTests {
    /// The names of this process's threads.
    private static func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
        }
    }

    /// Threads that could be a link's, a transfer's or a WebSocket's: not other suites' bus
    /// threads (named "sd-bus…", "dbk-…", "test-…") nor Dispatch's overcommit ones, which come
    /// and go with the load. (A thread started by a task inherits the pool thread's name,
    /// "…oot.default-qos", so those count.)
    private static func candidateThreads(_ names: [String]) -> [String] {
        names.filter { name in
            !name.hasPrefix("sd-bus") && !name.hasPrefix("dbk-") && !name.hasPrefix("test-") && name != "-qos.overcommit"
        }
    }

    /// Whether `fd` is ready for `events` within 60 s (a guard against a hang, not a timing
    /// assertion). The wait is a thread's of its own: blocking the pool could starve the tasks
    /// that make `fd` ready.
    private static func ready(_ fd: Int32, _ events: Int16) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread {
                var entry = pollfd(fd: fd, events: events, revents: 0)
                while true {
                    let n = poll(&entry, 1, 60_000)
                    if n >= 0 || errno != EINTR { return continuation.resume(returning: n > 0) }
                }
            }.start()
        }
    }

    /// A TCP listener on 127.0.0.1: its descriptor and port.
    private static func listener() throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// How many links, transfers and WebSockets: with a thread each, as before the loop, that
    /// many threads three times over. Few: the descriptors they take (about six each) show in
    /// other suites' counts of open descriptors.
    static let count = 6

    @Test("links' sockets, curl transfers and WebSockets, all active at once, are served by the one loop thread, not one each")
    func oneThread() async throws {
        let name = "one-loop-proof"
        let threadsBefore = Self.candidateThreads(Self.threadNames()).count
        let server = try Self.listener()
        defer { close(server.fd) }
        var pairs: [(ours: Int32, peer: Int32)] = []
        var links: [(loop: SocketLoop, inbox: PacketInbox)] = []
        for _ in 0..<Self.count {
            var fds: [Int32] = [-1, -1]
            #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
            pairs.append((fds[0], fds[1]))
            let inbox = PacketInbox()
            links.append((try SocketLoop(channels: [.init(notifyFD: fds[0], writeFD: nil, inbox: inbox)], name: name), inbox))
        }
        var transports: [CurlHTTPTransport] = []
        var responses: [Task<HTTPResponse, any Error>] = []
        var connections: [Int32] = []
        for _ in 0..<Self.count {
            let transport = try CurlHTTPTransport()
            transports.append(transport)
            let url = "http://127.0.0.1:\(server.port)/"
            responses.append(Task { try await transport.send(HTTPRequest(method: "GET", url: url, timeout: .seconds(60))) })
            // The request arrives: curl's socket is served.
            #expect(await Self.ready(server.fd, Int16(POLLIN)), "no connection from curl")
            let connection = accept(server.fd, nil, nil)
            #expect(connection >= 0)
            connections.append(connection)
            #expect(await Self.ready(connection, Int16(POLLIN)), "no request from curl")
            var request = [UInt8](repeating: 0, count: 4096)
            #expect(read(connection, &request, request.count) > 0)
            let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel".utf8)
            #expect(write(connection, head, head.count) == head.count)
        }
        defer { for fd in connections { close(fd) } }
        // Every transfer has its head and is waiting for the rest of its body; every link takes a packet.
        var bodies: [HTTPResponse] = []
        for response in responses { bodies.append(try await response.value) }
        for (index, pair) in pairs.enumerated() {
            let packet: [UInt8] = [UInt8(index)]
            #expect(write(pair.peer, packet, 1) == 1)
            #expect(await links[index].inbox.next() == .packet(packet))
        }
        let webSockets = try await Self.openWebSockets()
        let names = Self.threadNames()
        // Other suites start and end threads meanwhile (a few); a thread per link, transfer or
        // WebSocket would be 3 × count more.
        let candidates = Self.candidateThreads(names)
        #expect(candidates.count < threadsBefore + 2 * Self.count, "\(threadsBefore) threads before, now \(candidates) of \(names)")
        #expect(names.filter { $0 == "glassd-loop" }.count == 1, "\(names)")
        // And they go on being served: each body ends whole.
        for (connection, response) in zip(connections, bodies) {
            #expect(write(connection, "lo", 2) == 2)
            var body: [UInt8] = []
            for try await chunk in response.body { body += chunk }
            #expect(body == Array("hello".utf8))
        }
        for link in links { link.loop.close() }
        for pair in pairs { close(pair.peer) }
        // The server hangs up: each connection ends at once (no close handshake to wait out).
        for peer in webSockets.peers { close(peer) }
        for webSocket in webSockets.connections { await webSocket.close() }
    }

    /// `count` WebSockets to a server played here, each open and its first message read: served.
    /// Returns them with the server's ends, left open.
    private static func openWebSockets() async throws -> (connections: [WebSocketConnection], peers: [Int32]) {
        let server = try listener()
        defer { close(server.fd) }
        var connections: [WebSocketConnection] = []
        var peers: [Int32] = []
        for index in 0..<count {
            let url = "ws://127.0.0.1:\(server.port)/"
            let connecting = Task { try await WebSocketConnection.connect(to: url, timeout: .seconds(60)) }
            #expect(await ready(server.fd, Int16(POLLIN)), "no WebSocket connection")
            let peer = accept(server.fd, nil, nil)
            _ = fcntl(peer, F_SETFD, FD_CLOEXEC)
            peers.append(peer)
            #expect(await ready(peer, Int16(POLLIN)), "no upgrade request")
            var request = [UInt8](repeating: 0, count: 4096)
            let n = read(peer, &request, request.count)
            let head = String(decoding: request[..<max(0, n)], as: UTF8.self)
            let key = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }
                .map { String($0.dropFirst("sec-websocket-key:".count)).trimmingCharacters(in: .whitespaces) } ?? ""
            let answer =
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: \(ClientHandshake.acceptValue(forKey: key))\r\n\r\n"
            // A text frame, unmasked as a server's are, right behind the answer.
            let text = Array("hi \(index)".utf8)
            let bytes = Array(answer.utf8) + [0x81, UInt8(text.count)] + text
            #expect(write(peer, bytes, bytes.count) == bytes.count)
            let connection = try await connecting.value
            var messages = connection.messages.makeAsyncIterator()
            #expect(try await messages.next() == .text("hi \(index)"))
            connections.append(connection)
        }
        return (connections, peers)
    }
}
