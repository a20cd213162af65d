// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Synchronization
import WebSocket

struct TestServerError: Error, CustomStringConvertible {
    var description: String
}

/// A one-connection WebSocket server on 127.0.0.1 (port 0: the kernel picks) for the tests,
/// written on plain blocking POSIX sockets on its own thread. A test gives it a script for the
/// connection it accepts, then awaits the script's result.
final class TestServer: Sendable {
    let port: UInt16
    private let listenFD: Int32

    /// `listening: false` binds the port but never listens, so connecting to it is refused while
    /// nobody else can take the port meanwhile.
    init(listening: Bool = true) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestServerError(description: "socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && (!listening || listen(fd, 4) == 0)
                    && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw TestServerError(description: "bind/listen failed: \(String(cString: strerror(errno)))")
        }
        listenFD = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit {
        close(listenFD)
    }

    var url: String { "ws://127.0.0.1:\(port)/test?x=1" }

    /// Accepts one connection and runs `script` on it on a new thread; `finished()` gives what it
    /// returned or threw.
    func run<T: Sendable>(_ script: @escaping @Sendable (Peer) throws -> T) -> Run<T> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: T.self, throwing: (any Error).self)
        let thread = Thread { [self] in
            do {
                try Peer.wait(listenFD, for: Int16(POLLIN))
                let fd = accept(listenFD, nil, nil)
                guard fd >= 0 else { throw TestServerError(description: "accept failed") }
                let peer = Peer(fd: fd)
                defer { close(fd) }
                continuation.yield(try script(peer))
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        thread.start()
        return Run(stream: stream)
    }

    struct Run<T: Sendable>: Sendable {
        let stream: AsyncThrowingStream<T, any Error>

        func finished() async throws -> T {
            for try await value in stream { return value }
            throw TestServerError(description: "the script ended without a result")
        }
    }

    /// The server's side of one connection, with blocking calls: it runs on its own thread.
    final class Peer {
        let fd: Int32
        private var received: [UInt8] = []
        private var decoder = FrameDecoder(expectsMaskedFrames: true)

        init(fd: Int32) {
            self.fd = fd
        }

        /// Waits for `fd`; the bound only keeps a broken test from hanging forever.
        static func wait(_ fd: Int32, for events: Int16) throws {
            var entry = pollfd(fd: fd, events: events, revents: 0)
            guard poll(&entry, 1, 60_000) == 1 else { throw TestServerError(description: "nothing happened for 60 s") }
        }

        func readSome() throws -> [UInt8] {
            try Self.wait(fd, for: Int16(POLLIN))
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = read(fd, &chunk, chunk.count)
            guard n >= 0 else { throw TestServerError(description: "read failed") }
            return Array(chunk[..<n])
        }

        /// Reads the upgrade request; returns it as text.
        func readRequest() throws -> String {
            while true {
                if let end = received.firstRange(of: Array("\r\n\r\n".utf8)) {
                    let head = String(decoding: received[..<end.lowerBound], as: UTF8.self)
                    decoder.feed(received[end.upperBound...])
                    received = []
                    return head
                }
                let bytes = try readSome()
                guard !bytes.isEmpty else { throw TestServerError(description: "EOF in the request") }
                received += bytes
            }
        }

        /// Answers the upgrade request with 101, then `extra` in the same write.
        @discardableResult
        func acceptHandshake(then extra: [UInt8] = []) throws -> String {
            let request = try readRequest()
            let keyLine = request.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }
            guard let key = keyLine?.split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces) else {
                throw TestServerError(description: "no key in \(request)")
            }
            let answer =
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: \(ClientHandshake.acceptValue(forKey: key))\r\n\r\n"
            try send(Array(answer.utf8) + extra)
            return request
        }

        func send(_ bytes: [UInt8]) throws {
            var written = 0
            while written < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + written, $0.count - written, Int32(MSG_NOSIGNAL)) }
                guard n > 0 else { throw TestServerError(description: "send failed") }
                written += n
            }
        }

        func send(_ frame: WebSocketFrame) throws {
            try send(frame.encoded(maskingKey: nil))
        }

        /// The client's next frame (clients mask; the decoder insists).
        func readFrame() throws -> WebSocketFrame {
            while true {
                if let frame = try decoder.next() { return frame }
                let bytes = try readSome()
                guard !bytes.isEmpty else { throw TestServerError(description: "EOF instead of a frame") }
                decoder.feed(bytes)
            }
        }

        /// Waits for the client to close the socket, failing on any frame before that.
        func readEOF() throws {
            let bytes = try readSome()
            guard bytes.isEmpty else { throw TestServerError(description: "\(bytes.count) bytes instead of EOF") }
        }

        static func closeCode(_ frame: WebSocketFrame) -> UInt16? {
            guard frame.opcode == .close, frame.payload.count >= 2 else { return nil }
            return UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1])
        }
    }
}

@available(*, unavailable)
extension TestServer.Peer: Sendable {}
