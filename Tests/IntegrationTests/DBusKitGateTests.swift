// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import DBusKit
import Synchronization
import Testing

/// BusConnection.gate: calls held for an asynchronous check, then dispatched or refused.
extension DBusKitTests {
    /// What the gate's check saw and decides: per member, allowed or not; "Slow" waits for `release`.
    final class Checker: Sendable {
        let seen = Mutex<[AuthorizationRequest]>([])
        /// The methods whose handlers ran, in order.
        let ran = Mutex<[String]>([])
        let allowed: Set<String>
        let release = OneShotEvent()
        let waiting = OneShotEvent()

        init(allowed: Set<String>) { self.allowed = allowed }

        func check(_ request: AuthorizationRequest) async -> AuthorizationDecision {
            seen.withLock { $0.append(request) }
            if request.call.member == "Slow" {
                waiting.fire()
                await release.wait()
            }
            return allowed.contains(request.call.member)
                ? .allowed : .refused(BusError(name: "org.freedesktop.DBus.Error.AccessDenied", message: "no \(request.action)"))
        }
    }

    private func gatedSpec(_ checker: Checker) -> InterfaceSpec {
        InterfaceSpec(
            name: Self.iface,
            methods: ["Change", "Refused", "Slow", "Ping"].map { name in
                .init(name, output: [("ok", "b")]) { _ in
                    checker.ran.withLock { $0.append(name) }
                    return [.bool(true)]
                }
            },
            properties: [
                .init("Level", .uint32(1)) { _ in },
                .init("Locked", .uint32(1)) { _ in },
            ])
    }

    private static let actions: [GatedCall: String] = [
        .method(iface, "Change"): "test.change", .method(iface, "Refused"): "test.refused", .method(iface, "Slow"): "test.slow",
        .propertyWrite(iface, "Level"): "test.level", .propertyWrite(iface, "Locked"): "test.locked",
    ]

    @Test("gated calls run only once allowed, refused ones answer the check's error and never run; property writes too; the rest passes")
    func gate() async throws {
        let checker = Checker(allowed: ["Change", "Level"])
        try await withService(gatedSpec(checker)) { server, client, name in
            try await server.gate(Self.actions) { await checker.check($0) }
            #expect(try await client.call(name, path: "/t", interface: Self.iface, member: "Change") == [.bool(true)])
            await #expect(throws: BusError(name: "org.freedesktop.DBus.Error.AccessDenied", message: "no test.refused")) {
                try await client.call(name, path: "/t", interface: Self.iface, member: "Refused")
            }
            #expect(try await client.call(name, path: "/t", interface: Self.iface, member: "Ping") == [.bool(true)])
            for (property, allowed) in [("Level", true), ("Locked", false)] {
                let set = try? await client.call(
                    name, path: "/t", interface: "org.freedesktop.DBus.Properties", member: "Set",
                    [.string(Self.iface), .string(property), .variant(.uint32(7))])
                #expect((set != nil) == allowed, "\(property)")
                let value = try await client.call(
                    name, path: "/t", interface: "org.freedesktop.DBus.Properties", member: "Get", [.string(Self.iface), .string(property)])
                #expect(value == [.variant(.uint32(allowed ? 7 : 1))], "\(property)")
            }
            #expect(checker.ran.withLock { $0 } == ["Change", "Ping"])
            let seen = checker.seen.withLock { $0 }
            #expect(seen.map(\.action) == ["test.change", "test.refused", "test.level", "test.locked"])
            let caller = try await client.uniqueName()
            #expect(seen.allSatisfy { $0.sender == caller && !$0.interactive })
            #expect(seen.last?.call == .propertyWrite(Self.iface, "Locked"))
        }
    }

    @Test("while a check waits (an authentication dialog), other calls are answered; the held call runs when allowed; the caller's interactive flag reaches the check")
    func gateWaits() async throws {
        let checker = Checker(allowed: ["Slow"])
        try await withService(gatedSpec(checker), interactiveClient: true) { server, client, name in
            try await server.gate(Self.actions) { await checker.check($0) }
            async let slow = client.call(name, path: "/t", interface: Self.iface, member: "Slow")
            await checker.waiting.wait()
            #expect(try await client.call(name, path: "/t", interface: Self.iface, member: "Ping") == [.bool(true)])
            #expect(checker.ran.withLock { $0 } == ["Ping"])
            checker.release.fire()
            #expect(try await slow == [.bool(true)])
            #expect(checker.ran.withLock { $0 } == ["Ping", "Slow"])
            #expect(checker.seen.withLock { $0 }.first?.interactive == true)
        }
    }
}
