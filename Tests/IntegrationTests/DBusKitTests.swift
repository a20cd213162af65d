// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import DBusKit
import Foundation
import Synchronization
import Testing

/// The project's sd-bus layer on its own, between two connections on a private bus.
@Suite("DBusKit", .timeLimit(.minutes(3)))
struct DBusKitTests {
    static let iface = "org.glassd.Test1"

    /// Serves `spec` at /t on one connection, gives `body` a second connection to call it from.
    private func withService(
        _ spec: InterfaceSpec, maxPendingCalls: Int = BusConnection.defaultMaxPendingCalls,
        _ body: (BusConnection, String) async throws -> Void
    ) async throws {
        try await withService(spec, maxPendingCalls: maxPendingCalls) { _, client, name in try await body(client, name) }
    }

    /// The same, handing `body` the serving connection too.
    func withService(
        _ spec: InterfaceSpec, maxPendingCalls: Int = BusConnection.defaultMaxPendingCalls, interactiveClient: Bool = false,
        _ body: (BusConnection, BusConnection, String) async throws -> Void
    ) async throws {
        try await World.with { world in
            let server = try await BusConnection.open(.address(world.busAddress), maxPendingCalls: maxPendingCalls)
            try await server.export(spec, at: "/t")
            let name = try await server.uniqueName()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await server.serve() }
                let client = try await BusConnection.open(.address(world.busAddress), allowInteractiveAuthorization: interactiveClient)
                try await body(server, client, name)
                await client.close()
                await server.close()
                try await group.waitForAll()
            }
        }
    }

    @Test("values of every kind survive a round trip")
    func roundTrip() async throws {
        let values: [DBusValue] = [
            .byte(255), .bool(true), .int16(-2), .uint16(65535), .int32(-70000), .uint32(4_000_000_000),
            .int64(-1 << 40), .uint64(1 << 63), .double(-0.5), .string("héllo \"quoted\""), .objectPath("/a/b"),
            .signature("a{sv}"), .bytes([0, 1, 2, 255]), .array(element: "s", []), .array(element: "(xs)", [.structure([.int64(1), .string("x")])]),
            .vardict(["n": .int16(-3), "list": .array(element: "s", [.string("a")]), "nested": .vardict(["k": .bool(false)])]),
            .dict(key: "o", value: "a{sv}", [.init(.objectPath("/p"), .vardict([:]))]),
            .variant(.variant(.uint32(7))),
        ]
        let input = values.enumerated().map { ("in\($0.offset)", $0.element.signature) }
        let output = values.enumerated().map { ("out\($0.offset)", $0.element.signature) }
        let spec = InterfaceSpec(name: Self.iface, methods: [
            .init("Echo", input: input, output: output) { call in call.arguments },
        ])
        try await withService(spec) { client, name in
            let reply = try await client.call(name, path: "/t", interface: Self.iface, member: "Echo", values)
            #expect(reply == values)
        }
    }

    @Test("an ay travels as bytes in both spellings, empty or not, and reads back as .byteArray")
    func byteArrays() async throws {
        // Both spellings of an ay are the same value; elements agree, empty ones included.
        #expect(DBusValue.bytes([1, 2]) == .byteArray([1, 2]))
        #expect(DBusValue.array(element: "y", [.byte(1), .byte(2)]) == .byteArray([1, 2]))
        #expect(DBusValue.array(element: "y", []) == .byteArray([]))
        #expect(DBusValue.byteArray([]) != .array(element: "s", []))
        #expect(DBusValue.byteArray([]).elements == [])
        #expect(DBusValue.byteArray([7]).elements == [.byte(7)])
        #expect(DBusValue.array(element: "y", []).elements == [])
        #expect(DBusValue.variant(.byteArray([9])).bytes == [9])
        #expect(DBusValue.array(element: "y", [.byte(3)]).bytes == [3])
        #expect(DBusValue.byteArray([]).signature == "ay")

        let spec = InterfaceSpec(name: Self.iface, methods: [
            .init("Echo", input: [("a", "ay"), ("b", "ay"), ("c", "ay"), ("d", "v")], output: [("a", "ay"), ("b", "ay"), ("c", "ay"), ("d", "v")]) { call in
                call.arguments
            }
        ])
        try await withService(spec) { client, name in
            let big = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let sent: [DBusValue] = [
                .array(element: "y", [.byte(0), .byte(255)]), .byteArray([]), .bytes(big), .variant(.array(element: "y", [])),
            ]
            let reply = try await client.call(name, path: "/t", interface: Self.iface, member: "Echo", sent)
            // What comes back is always the byte-array spelling.
            #expect(reply.count == 4)
            guard reply.count == 4 else { return }
            if case .byteArray(let bytes) = reply[0] { #expect(bytes == [0, 255]) } else { Issue.record("\(reply[0])") }
            if case .byteArray(let bytes) = reply[1] { #expect(bytes.isEmpty) } else { Issue.record("\(reply[1])") }
            #expect(reply[2].bytes == big)
            if case .variant(.byteArray(let bytes)) = reply[3] { #expect(bytes.isEmpty) } else { Issue.record("\(reply[3])") }
            #expect(reply == sent)

            // An ay holding something other than bytes is refused before anything is sent.
            await #expect(throws: BusError.invalidArgs("an ay holds only bytes")) {
                try await client.call(
                    name, path: "/t", interface: Self.iface, member: "Echo",
                    [.array(element: "y", [.string("x")]), .byteArray([]), .byteArray([]), .variant(.byte(0))])
            }
        }
    }

    @Test("beyond maxPendingCalls unanswered calls, a call is refused at once with LimitsExceeded")
    func pendingCallLimit() async throws {
        let release = OneShotEvent()
        let (started, startedSink) = AsyncStream.makeStream(of: Void.self)
        let spec = InterfaceSpec(name: Self.iface, methods: [
            .init("Held", output: [("released", "b")]) { _ in
                startedSink.yield()
                await release.wait()
                return [.bool(release.hasFired)]
            },
            .init("Fast", output: [("v", "u")]) { _ in [.uint32(1)] },
        ])
        try await withService(spec, maxPendingCalls: 3) { client, name in
            try await withThrowingTaskGroup(of: [DBusValue].self) { group in
                for _ in 0..<3 {
                    group.addTask { try await client.call(name, path: "/t", interface: Self.iface, member: "Held") }
                }
                var count = 0
                for await _ in started {
                    count += 1
                    if count == 3 { break }
                }
                // Three calls are waiting: a fourth, of any method, is refused.
                do {
                    _ = try await client.call(name, path: "/t", interface: Self.iface, member: "Fast")
                    Issue.record("a fourth pending call was accepted")
                } catch let error as BusError {
                    #expect(error.name == "org.freedesktop.DBus.Error.LimitsExceeded")
                }
                release.fire()
                var replies: [[DBusValue]] = []
                for try await reply in group { replies.append(reply) }
                #expect(replies == Array(repeating: [.bool(true)], count: 3))
            }
            // Answered calls make room again.
            #expect(try await client.call(name, path: "/t", interface: Self.iface, member: "Fast") == [.uint32(1)])
        }
    }

    @Test("a subscriber that falls behind gets .overflowed where signals were dropped, then carries on")
    func signalOverflow() async throws {
        let spec = InterfaceSpec(
            name: Self.iface, methods: [.init("Ping") { _ in [] }], signals: [.init("Tick", [("n", "u")])])
        try await withService(spec) { server, client, name in
            let events = try await client.subscribe(SignalMatch(interface: Self.iface, member: "Tick"), bufferLimit: 3)
            let plain = try await client.signals(SignalMatch(interface: Self.iface, member: "Tick"), bufferLimit: 3)
            for n in 0..<10 { try await server.emit("Tick", interface: Self.iface, at: "/t", [.uint32(UInt32(n))]) }
            // The reply comes after the ten signals, so they have all been dispatched by then.
            _ = try await client.call(name, path: "/t", interface: Self.iface, member: "Ping")

            var iterator = events.makeAsyncIterator()
            var seen: [String] = []
            for _ in 0..<4 {
                switch await iterator.next() {
                case .signal(let signal)?: seen.append("\(signal.arguments.first?.uint32 ?? 99)")
                case .overflowed?: seen.append("overflowed")
                case nil: seen.append("end")
                }
            }
            #expect(seen == ["0", "1", "2", "overflowed"])
            // Caught up: new signals come through again.
            try await server.emit("Tick", interface: Self.iface, at: "/t", [.uint32(10)])
            if case .signal(let signal)? = await iterator.next() {
                #expect(signal.arguments == [.uint32(10)])
            } else {
                Issue.record("no signal after the overflow")
            }

            // signals(_:) ends at the gap instead of skipping over it.
            var plainSeen: [UInt32] = []
            for await signal in plain { plainSeen.append(signal.arguments.first?.uint32 ?? 99) }
            #expect(plainSeen == [0, 1, 2])
        }
    }

    @Test("signals a handler posts without waiting go out in order, all before its reply")
    func postedSignalsPrecedeReply() async throws {
        let server = Mutex<BusConnection?>(nil)
        let spec = InterfaceSpec(
            name: Self.iface,
            methods: [
                .init("Burst") { _ in
                    let connection = try #require(server.withLock { $0 })
                    for n in 0..<50 { connection.post("Tick", interface: Self.iface, at: "/t", [.uint32(UInt32(n))]) }
                    return []
                }
            ],
            signals: [.init("Tick", [("n", "u")])])
        try await withService(spec) { serving, client, name in
            server.withLock { $0 = serving }
            let ticks = try await client.signals(SignalMatch(interface: Self.iface, member: "Tick"))
            _ = try await client.call(name, path: "/t", interface: Self.iface, member: "Burst")
            // Closing ends the subscription with what had arrived: signals sent after the reply
            // would be missing.
            await client.close()
            var seen: [UInt32] = []
            for await tick in ticks { seen.append(tick.arguments.first?.uint32 ?? 99) }
            #expect(seen == Array(0..<50))
        }
    }

    @Test("a handler is cancelled when its caller leaves the bus, and its call no longer counts")
    func callerLeaves() async throws {
        let never = OneShotEvent()
        let (started, startedSink) = AsyncStream.makeStream(of: Void.self)
        let (ended, endedSink) = AsyncStream.makeStream(of: Bool.self)
        let spec = InterfaceSpec(name: Self.iface, methods: [
            .init("Slow") { _ in
                startedSink.yield()
                // Never fired: only cancellation ends this wait.
                await never.wait()
                endedSink.yield(!never.hasFired && Task.isCancelled)
                return []
            },
            .init("Fast", output: [("v", "u")]) { _ in [.uint32(1)] },
        ])
        // One pending call at most: the Slow one must be forgotten for another call to be accepted.
        try await withService(spec, maxPendingCalls: 1) { server, client, name in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        _ = try await client.call(name, path: "/t", interface: Self.iface, member: "Slow")
                        Issue.record("Slow was answered")
                    } catch let error as BusError {
                        // Failed locally when the connection closed: no reply ever came.
                        #expect(error == BusError.failed("the bus connection closed"))
                    }
                }
                for await _ in started { break }
                await client.close()
                var cancelled: Bool?
                for await value in ended {
                    cancelled = value
                    break
                }
                #expect(cancelled == true)
                try await group.waitForAll()
            }
            // The pending call went with its caller, so there is room for this one.
            let fast = try await server.call(name, path: "/t", interface: Self.iface, member: "Fast")
            #expect(fast == [.uint32(1)])
        }
    }

    @Test("a closed connection leaves no thread and no descriptor behind, and still answers")
    func closeReleasesEverything() async throws {
        try await World.with { world in
            let name = "dbk-close-test"
            let before = (threads: Self.threadNames(), fds: Self.openDescriptors())
            for _ in 0..<150 {
                let connection = try await BusConnection.open(.address(world.busAddress), threadName: name)
                _ = try await connection.uniqueName()
                // Returns once the bus thread has exited (joined) and the descriptors are closed.
                await connection.close()
            }
            // One more, named otherwise: the last of the 150 threads has long finished leaving the
            // kernel's thread list by the time this one has connected and closed.
            let fence = try await BusConnection.open(.address(world.busAddress), threadName: "dbk-fence")
            await fence.close()
            let after = (threads: Self.threadNames(), fds: Self.openDescriptors())
            #expect(after.threads.filter { $0 == name }.isEmpty)
            // Other suites run meanwhile (the BLE world's pipes and sockets, temporary files, the
            // embedded backend's servers, proxy and Scripts/run) and open or close some of their
            // own (66 more were seen once); a leak here would be 150 threads and 300 descriptors or more.
            #expect(after.threads.count < before.threads.count + 25, "\(before.threads) → \(after.threads)")
            #expect(after.fds < before.fds + 150, "\(before.fds) → \(after.fds) descriptors")

            // Work sent to a closed connection still runs (on a short-lived thread), never hangs.
            let closed = try await BusConnection.open(.address(world.busAddress))
            await closed.close()
            #expect(await closed.isOpen == false)
            await #expect(throws: BusError.failed("the bus connection is closed")) {
                try await closed.call("org.freedesktop.DBus", path: "/", interface: "org.freedesktop.DBus", member: "GetId")
            }
            await closed.close()
        }
    }

    /// The names of this process's threads.
    private static func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .newlines)
        }
    }

    private static func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.count ?? 0
    }

    @Test("errors come back typed; unknown methods are refused")
    func errors() async throws {
        let spec = InterfaceSpec(name: Self.iface, methods: [
            .init("Fail") { _ in throw BusError(name: "org.glassd.Error.Test", message: "as asked") },
            .init("Crash") { _ in throw CocoaError(.fileNoSuchFile) },
        ])
        try await withService(spec) { client, name in
            await #expect(throws: BusError(name: "org.glassd.Error.Test", message: "as asked")) {
                try await client.call(name, path: "/t", interface: Self.iface, member: "Fail")
            }
            do {
                _ = try await client.call(name, path: "/t", interface: Self.iface, member: "Crash")
                Issue.record("Crash should fail")
            } catch let error as BusError {
                #expect(error.name == "org.freedesktop.DBus.Error.Failed")
            }
            do {
                _ = try await client.call(name, path: "/t", interface: Self.iface, member: "Nope")
                Issue.record("Nope should fail")
            } catch let error as BusError {
                #expect(error.name == "org.freedesktop.DBus.Error.UnknownMethod")
            }
        }
    }

    @Test("a cancelled call ends without waiting for its reply, and the connection keeps working")
    func cancellation() async throws {
        let started = AsyncStream.makeStream(of: Void.self)
        let never = OneShotEvent()
        let handlerReturned = Flag()
        let spec = InterfaceSpec(name: Self.iface, methods: [
            .init("Slow") { _ in
                started.continuation.yield()
                // Never opened: this handler only ends when the connection closes.
                await never.wait()
                handlerReturned.set()
                return []
            },
            .init("Fast", output: [("v", "u")]) { _ in [.uint32(1)] },
        ])
        try await withService(spec) { client, name in
            await withTaskGroup(of: (any Error)?.self) { group in
                group.addTask {
                    do {
                        _ = try await client.call(name, path: "/t", interface: Self.iface, member: "Slow", timeoutSeconds: 120)
                        return nil
                    } catch {
                        return error
                    }
                }
                for await _ in started.stream { break }
                group.cancelAll()
                let error = await group.next() ?? nil
                #expect(error is CancellationError)
            }
            // The handler is still waiting: the call ended without a reply.
            #expect(!handlerReturned.isSet)
            let fast = try await client.call(name, path: "/t", interface: Self.iface, member: "Fast")
            #expect(fast == [.uint32(1)])
        }
    }
}
