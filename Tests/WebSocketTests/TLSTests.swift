// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Testing
import TestSupport
import WebSocket

/// A WebSocket server in TLS for the tests: Python's ssl module with a certificate the openssl
/// CLI makes for the test. It greets each connection with "hello over tls", echoes one message,
/// then closes with 1000.
private struct TLSServer {
    static let script = #"""
        import base64, hashlib, os, socket, ssl, struct, sys
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[1], sys.argv[2])
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(4)
        srv.settimeout(60)  # the bound on a test gone wrong
        print(srv.getsockname()[1], flush=True)

        def read_exact(conn, n):
            data = b""
            while len(data) < n:
                chunk = conn.recv(n - len(data))
                if not chunk:
                    raise EOFError
                data += chunk
            return data

        def read_frame(conn):
            b0, b1 = read_exact(conn, 2)
            length = b1 & 0x7F
            if length == 126:
                length = struct.unpack("!H", read_exact(conn, 2))[0]
            elif length == 127:
                length = struct.unpack("!Q", read_exact(conn, 8))[0]
            mask = read_exact(conn, 4)
            payload = read_exact(conn, length)
            return b0 & 0x0F, bytes(c ^ mask[i % 4] for i, c in enumerate(payload))

        def frame(opcode, payload):
            assert len(payload) < 126
            return bytes([0x80 | opcode, len(payload)]) + payload

        while True:
            try:
                raw, _ = srv.accept()
            except socket.timeout:
                break
            raw.settimeout(20)
            conn = None
            try:
                conn = ctx.wrap_socket(raw, server_side=True)
                head = b""
                while b"\r\n\r\n" not in head:
                    chunk = conn.recv(4096)
                    if not chunk:
                        raise EOFError  # a client that refused the certificate hangs up here (TLS 1.3)
                    head += chunk
                key = [l.split(b":", 1)[1].strip() for l in head.split(b"\r\n") if l.lower().startswith(b"sec-websocket-key:")][0]
                accept = base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
                conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                             b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n" + frame(1, b"hello over tls"))
                opcode, payload = read_frame(conn)
                conn.sendall(frame(opcode, payload) + frame(8, b"\x03\xe8"))
                read_frame(conn)  # the client's close answer
            except (ssl.SSLError, OSError, EOFError, IndexError) as e:
                sys.stderr.write("connection ended: %r\n" % e)
            finally:
                (conn or raw).close()
        """#

    let process: Process
    let port: String

    /// Starts the server with `cert` and `key`; returns once it listens.
    static func start(cert: String, key: String, directory: String) async throws -> TLSServer {
        let scriptPath = directory + "/tls_server.py"
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", scriptPath, cert, key]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Bounded: the script prints its port first thing, or exits (EOF) on any failure. The
        // read blocks, so it runs on a thread of its own.
        let reader = out.fileHandleForReading
        let line = await withCheckedContinuation { (done: CheckedContinuation<Data, Never>) in
            Thread.detachNewThread {
                var line = Data()
                while !line.contains(UInt8(ascii: "\n")) {
                    let chunk = reader.availableData
                    guard !chunk.isEmpty else { break }
                    line += chunk
                }
                done.resume(returning: line)
            }
        }
        let port = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard UInt16(port) != nil else {
            kill(process.processIdentifier, SIGKILL)
            throw TLSTestError("the TLS server did not start: \(port)")
        }
        return TLSServer(process: process, port: port)
    }

    /// SIGKILL: the test process may ignore SIGTERM, and its children inherit that.
    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

private struct TLSTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A self-signed certificate for `names` (SANs such as "DNS:localhost,IP:127.0.0.1"), made by
/// the openssl CLI in `directory`; its certificate and key paths.
private func makeCertificate(_ names: String, in directory: String, name: String) async throws -> (cert: String, key: String) {
    try await onOwnThread { try makeCertificateBlocking(names, in: directory, name: name) }
}

private func makeCertificateBlocking(_ names: String, in directory: String, name: String) throws -> (cert: String, key: String) {
    let cert = "\(directory)/\(name).pem"
    let key = "\(directory)/\(name).key"
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
        "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
        "-subj", "/CN=glassd test", "-addext", "subjectAltName=\(names)",
    ]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw TLSTestError("openssl req failed") }
    return (cert, key)
}

@Suite("wss://", .timeLimit(.minutes(5)))
struct TLSTests {
    private static func scratch() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wss-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test("a server whose certificate the CA file vouches for: the handshake, messages both ways and the close go over TLS")
    func trusted() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (cert, key) = try await makeCertificate("DNS:localhost,IP:127.0.0.1", in: directory, name: "server")
        let server = try await TLSServer.start(cert: cert, key: key, directory: directory)
        defer { server.stop() }
        for host in ["127.0.0.1", "localhost"] {
            let connection = try await WebSocketConnection.connect(
                to: "wss://\(host):\(server.port)/ws", timeout: .seconds(10), caFile: cert)
            var messages = connection.messages.makeAsyncIterator()
            #expect(try await messages.next() == .text("hello over tls"))
            try await connection.send(text: "echo me")
            #expect(try await messages.next() == .text("echo me"))
            #expect(try await messages.next() == nil)
            #expect(connection.closeFrame?.code == 1000)
        }
    }

    @Test("a certificate nobody vouches for, or one for another name, is refused as such")
    func untrusted() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (cert, key) = try await makeCertificate("DNS:localhost,IP:127.0.0.1", in: directory, name: "server")
        let server = try await TLSServer.start(cert: cert, key: key, directory: directory)
        defer { server.stop() }
        // The system's CAs do not know a self-signed certificate.
        await #expect {
            try await WebSocketConnection.connect(to: "wss://127.0.0.1:\(server.port)/", timeout: .seconds(10))
        } throws: { error in
            guard case .certificateRejected(let why) = error as? WebSocketError else { return false }
            return !why.isEmpty
        }
        // Trusted, but it names other hosts than the one connected to.
        let (otherCert, otherKey) = try await makeCertificate("DNS:other.example", in: directory, name: "other")
        let other = try await TLSServer.start(cert: otherCert, key: otherKey, directory: directory)
        defer { other.stop() }
        await #expect {
            try await WebSocketConnection.connect(to: "wss://127.0.0.1:\(other.port)/", timeout: .seconds(10), caFile: otherCert)
        } throws: { error in
            guard case .certificateRejected = error as? WebSocketError else { return false }
            return true
        }
        // The first server is still fine for a client that trusts it.
        let connection = try await WebSocketConnection.connect(
            to: "wss://127.0.0.1:\(server.port)/", timeout: .seconds(10), caFile: cert)
        var messages = connection.messages.makeAsyncIterator()
        #expect(try await messages.next() == .text("hello over tls"))
        try await connection.send(text: "still here")
        #expect(try await messages.next() == .text("still here"))
    }

    @Test("a plain ws:// client at a TLS port fails its handshake instead of hanging")
    func plainAtTLSPort() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (cert, key) = try await makeCertificate("IP:127.0.0.1", in: directory, name: "server")
        let server = try await TLSServer.start(cert: cert, key: key, directory: directory)
        defer { server.stop() }
        await #expect(throws: WebSocketError.self) {
            try await WebSocketConnection.connect(to: "ws://127.0.0.1:\(server.port)/", timeout: .seconds(3))
        }
    }
}
