// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import Testing

/// BusConnection.monitor on a private bus: what it overhears between two other connections.
@Suite("DBusKit monitor", .timeLimit(.minutes(3)))
struct DBusKitMonitorTests {
    static let iface = "org.glassd.Test1"

    @Test("a monitor overhears a call between two others and its return, and nothing addressed to itself (the return names the call's serial and caller); the caller still gets the callee's answer; closing the monitor ends its stream")
    func overhears() async throws {
        let spec = InterfaceSpec(name: Self.iface, methods: [.init("Echo", input: [("s", "s")], output: [("r", "s")]) { call in call.arguments }])
        try await World.with { world in
            let server = try await BusConnection.open(.address(world.busAddress))
            try await server.export(spec, at: "/t")
            let name = try await server.uniqueName()
            let (monitor, overheard) = try await BusConnection.monitor(
                .address(world.busAddress), rules: ["type='method_call',interface='\(Self.iface)'", "type='method_return',sender='\(name)'"])
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await server.serve() }
                let client = try await BusConnection.open(.address(world.busAddress))
                let clientName = try await client.uniqueName()
                let reply = try await client.call(name, path: "/t", interface: Self.iface, member: "Echo", [.string("hi")])
                #expect(reply == [.string("hi")])
                let seen = try await within(.seconds(20), failure: { "the monitor did not see the call and its return" }) {
                    var messages: [MonitoredMessage] = []
                    for await message in overheard {
                        messages.append(message)
                        if messages.count == 2 { break }
                    }
                    return messages
                }
                try #require(seen.count == 2)
                let (call, answer) = (seen[0], seen[1])
                #expect(call.kind == .methodCall && call.sender == clientName && call.destination == name)
                #expect(call.path == "/t" && call.interface == Self.iface && call.member == "Echo" && call.arguments == [.string("hi")])
                #expect(answer.kind == .methodReturn && answer.sender == name && answer.destination == clientName)
                #expect(answer.replySerial == call.serial && answer.arguments == [.string("hi")])
                #expect(await monitor.isOpen)

                await monitor.close()
                let ended = try await within(.seconds(20), failure: { "the stream did not end" }) {
                    for await _ in overheard {}
                    return true
                }
                #expect(ended)
                await client.close()
                await server.close()
                try await group.waitForAll()
            }
        }
    }
}
