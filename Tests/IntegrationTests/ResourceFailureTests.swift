// SPDX-License-Identifier: GPL-2.0-or-later
@testable import Bluetooth
import Concurrency
@testable import DBusKit
@testable import EventLoop
import Foundation
import Glibc
@testable import HTTPKit
import LinkKit
import Testing

/// Out of descriptors or threads, the loops' initialisers throw what failed, with errno, and the
/// daemon goes on (or stops) as it decides: no trap. The failing system call is stood in for.
@Suite("Resource failures throw", .timeLimit(.minutes(3)))
struct ResourceFailureTests {
    /// A stand-in for a descriptor-making call that fails as it does at RLIMIT_NOFILE.
    static func noDescriptors() -> Int32 {
        errno = EMFILE
        return -1
    }

    /// An event loop that cannot be made for want of a descriptor.
    static func noLoop() throws(ResourceError) -> EventLoop {
        try EventLoop(name: "test-loop", makeWakeFD: noDescriptors)
    }

    @Test("the event loop's eventfd or curl's multi handle missing: a ResourceError naming it")
    func curl() {
        #expect(throws: ResourceError(call: "eventfd", purpose: "the event loop's wake-up", errno: EMFILE)) {
            try CurlLoop(loop: Self.noLoop)
        }
        #expect(throws: ResourceError(call: "curl_multi_init", purpose: "the curl transport", errno: 0)) {
            try CurlLoop(makeMulti: { nil })
        }
        let error = ResourceError(call: "eventfd", purpose: "the event loop's wake-up", errno: EMFILE)
        #expect(error.description == "eventfd for the event loop's wake-up failed: Too many open files")
    }

    @Test("the bus thread's eventfd missing: a BusError saying so with the system's reason")
    func busEventFD() {
        #expect(throws: BusError.failed("eventfd for the bus thread: Too many open files")) {
            try BusLoop(makeWakeFD: Self.noDescriptors)
        }
    }

    @Test("no thread for the bus: start throws, the loop counts as exited, and work sent to it, before or after, still runs")
    func busThread() async throws {
        let loop = try BusLoop()
        let early = OneShotEvent()
        loop.execute { early.fire() }
        #expect(throws: BusError.failed("pthread_create for the bus thread: Resource temporarily unavailable")) {
            try loop.start(name: "test-bus", threads: ThreadCreator { _, _ in EAGAIN }, step: { nil })
        }
        await loop.exited.wait()
        await early.wait()
        let late = OneShotEvent()
        loop.execute { late.fire() }
        await late.wait()
        loop.join()
    }

    @Test("the event loop missing for the BLE sockets: a ResourceError, and the sockets are left to the caller")
    func socketPipe() throws {
        var fds: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds) == 0)
        defer { for fd in fds { close(fd) } }
        #expect(throws: ResourceError(call: "eventfd", purpose: "the event loop's wake-up", errno: EMFILE)) {
            try SocketLoop(
                channels: [.init(notifyFD: fds[0], writeFD: nil, inbox: PacketInbox())], name: "test-sockets", loop: Self.noLoop)
        }
        #expect(fcntl(fds[0], F_GETFD) >= 0, "the socket was closed")
    }

    /// What `executable` prints with at most `limit` descriptors (prlimit), over a session bus
    /// address that leads nowhere (past the descriptors, it fails there).
    static func underLimit(_ limit: Int, _ executable: String, _ arguments: [String]) async throws -> CommandResult {
        try await within(.seconds(60), failure: { "\(executable) did not end under RLIMIT_NOFILE \(limit)" }) {
            try await runCommand(
                "prlimit", ["--nofile=\(limit):\(limit)", executable] + arguments,
                environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent", "SWIFT_BACKTRACE": "enable=no"])
        }
    }

    @Test("glassd and glassctl run out of descriptors for real (RLIMIT_NOFILE): they say which and exit, never trap")
    func realLimit() async throws {
        let directory = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = FileManager.default.createFile(atPath: directory + "/glassd.conf", contents: Data())
        var glassd: [Int: CommandResult] = [:]
        // Too few for the runtime itself below 6; from some limit on, glassd gets past its own descriptors.
        for limit in 6...32 {
            let result = try await Self.underLimit(
                limit, Paths.glassd,
                ["--bus", "session", "--config", directory + "/glassd.conf", "--state-dir", directory + "/state\(limit)"])
            glassd[limit] = result
            if result.stderr.contains("connecting to the session bus") { break }
        }
        var glassctl: [Int: CommandResult] = [:]
        for limit in 6...32 {
            let result = try await Self.underLimit(limit, Paths.glassctl, ["status", "--bus", "session"])
            glassctl[limit] = result
            if result.stderr.contains("DBUS_SESSION_BUS_ADDRESS") || result.stderr.contains("connecting") { break }
        }
        let all = glassd.values.map(\.stderr) + glassctl.values.map(\.stderr)
        #expect(!all.contains { $0.contains("Precondition failed") || $0.contains("Fatal error") }, "\(all)")
        #expect(
            glassd.values.contains {
                $0.status == 71 && $0.stderr.contains("glassd: cannot start: eventfd for the event loop's wake-up failed: Too many open files")
            }, "\(glassd.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.status) \($0.value.stderr)" })")
        #expect(
            glassd.values.contains { $0.status == 1 && $0.stderr.contains("glassd: eventfd for the bus thread: Too many open files") },
            "\(glassd.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.status) \($0.value.stderr)" })")
        // Which of glassctl's few descriptors runs out first (the bus's eventfd, its socket, or
        // Dispatch's own, which traps in Dispatch) varies from run to run: some limit gives a clean line.
        #expect(
            glassctl.values.contains { $0.status == 1 && $0.stderr.hasPrefix("glassctl: ") && $0.stderr.contains("Too many open files") },
            "\(glassctl.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.status) \($0.value.stderr)" })")
    }
}
