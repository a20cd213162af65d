// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Glibc
import Synchronization
import Testing

/// The measurement of Scripts/bench-agent (numbers, not a test: it runs only with
/// GLASSD_BENCH_AGENT=1): glassd, a virtual Monocle and the fake TEN server; the time from a final
/// transcript leaving the server's websocket to its text on the virtual display, over N lines.
/// The result is one line `bench-agent: {json}`.
@Suite(
    "Agent benchmark", .serialized, .timeLimit(.minutes(10)),
    .enabled(if: ProcessInfo.processInfo.environment["GLASSD_BENCH_AGENT"] == "1"))
struct AgentBenchmark {
    private static let monocle = 3
    private static let lines = Int(ProcessInfo.processInfo.environment["GLASSD_BENCH_LINES"] ?? "") ?? 30

    static func bootTimeNS() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    @Test("final transcript to the display")
    func transcriptToDisplay() async throws {
        try await BLEWorld.with { ble in
            try await FakeTEN.with(in: ble.world.directory) { ten in
                let config = try ble.writeConfig()
                try ten.appendConfig(to: config, pingSeconds: 3)
                try await ble.withSession(Self.monocle, config: config) { bus, vm in
                    try await ble.pairReady(Self.monocle, bus)
                    let started = try await ble.world.busctl(
                        ["--json=short", "call", GlassdBus.name, GlassdBus.managerPath, GlassdBus.managerInterface,
                         GlassdBus.Method.startAgent, "a{sv}", "0"])
                    let path = try #require(busctlString(started), "\(started.stderr)")
                    try await waitForProperty(
                        bus, destination: GlassdBus.name, path: path, interface: GlassdBus.agentInterface, GlassdBus.Agent.state,
                        equals: .string("running"))
                    var times: [Double] = []
                    for n in 1...Self.lines {
                        let words = "answer number \(n) is here"
                        let sent = Mutex<Int64>(0)
                        _ = try await vm.waitForDisplay(containing: words, timeout: .seconds(30)) {
                            let at = try await ten.sendTranscript(role: "assistant", text: words, final: true, ts: n * 10)
                            sent.withLock { $0 = at }
                        }
                        // The fake stamps the send on the same clock (CLOCK_BOOTTIME).
                        times.append(Double(Self.bootTimeNS() - sent.withLock { $0 }) / 1e9)
                    }
                    let sorted = times.sorted()
                    let result: [String: Any] = [
                        "what": "transcript-to-display", "count": sorted.count, "p50_s": sorted[sorted.count / 2],
                        "p95_s": sorted[min(sorted.count - 1, sorted.count * 95 / 100)], "max_s": sorted.last ?? 0,
                    ]
                    let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
                    print("bench-agent: " + String(decoding: data, as: UTF8.self))
                }
            }
        }
    }
}
