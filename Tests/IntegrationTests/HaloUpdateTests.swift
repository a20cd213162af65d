// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Testing

private let worldReady = BLEWorld.available || ProcessInfo.processInfo.environment["GLASSD_REQUIRE_BLE"] != nil
private let halo = 3

/// A signed MCUboot image made by imgtool (Tests/World/make_mcuboot_image.py).
private struct MCUbootFile: Decodable {
    let path: String
    let sha256: String
    let hash: String
    let version: String
}

private func makeImage(version: String, size: Int = 60_000, in dir: String) async throws -> MCUbootFile {
    let result = try await runCommand(
        BLEWorld.venv + "/bin/python",
        [Paths.root + "/Tests/World/make_mcuboot_image.py", "--out", dir + "/zephyr-\(version).signed.bin", "--version", version, "--size", "\(size)"])
    guard result.ok else { throw TestFailure("make_mcuboot_image.py failed: \(result.stderr)") }
    guard let line = result.stdout.split(separator: "\n").last else { throw TestFailure("make_mcuboot_image.py printed nothing") }
    return try JSONDecoder().decode(MCUbootFile.self, from: Data(line.utf8))
}

/// Brilliant Halo firmware updates over MCUmgr (SMP) against the virtual Halo's MCUboot: a test
/// boot that glassd proves healthy before it confirms it.
@Suite("Halo updates over MCUmgr", .timeLimit(.minutes(10)), .serialized, .enabled(if: worldReady, "the Python BLE world is not set up"))
struct HaloUpdateTests {
    /// The paired Halo ready, an image of 0.8.8, then `body` with the image and the update's run.
    private func withHaloUpdate(
        restartSeconds: Int? = nil, _ arm: (VirtualFrame, BLEWorld, MCUbootFile) async throws -> Void = { _, _, _ in },
        _ check: (BLEWorld, VirtualFrame, MCUbootFile, CommandResult, [[String: Any]], AsyncStream<BusSignal>) async throws -> Void
    ) async throws {
        try await BLEWorld.with { ble in
            var config: String?
            if let restartSeconds {
                let path = try ble.writeConfig()
                let text = try String(contentsOfFile: path, encoding: .utf8)
                try (text + "[update]\nrestart_seconds = \(restartSeconds)\n").write(toFile: path, atomically: true, encoding: .utf8)
                config = path
            }
            try await ble.withFrameSession(halo, halo: true, config: config) { bus, vf in
                try await ble.pairReady(halo, bus)
                let image = try await makeImage(version: "0.8.8", in: ble.world.directory)
                try await arm(vf, ble, image)
                let boots = try await vf.boots()
                let run = try await within(.seconds(240), failure: { "the update did not end in 4 minutes" }) {
                    try await ble.world.glassctl(["update", "--json", image.path])
                }
                try await check(ble, vf, image, run, jsonObjects(run.stdout), boots)
            }
        }
    }

    private func slot(_ state: [String: Any], hash: String) -> [String: Any]? {
        (state["slots"] as? [[String: Any]])?.first { $0["hash"] as? String == hash }
    }

    private func firmwareVersion(_ world: World) async throws -> String? {
        let listed = try await world.glassctl(["devices", "--json"])
        let devices = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]] ?? []
        return devices.first { $0["address"] as? String == BLEWorld.adapterAddress(halo) }?["firmware_version"] as? String
    }

    @Test("glassctl update FILE on a Halo: uploaded, test boot, healthy, then confirmed; one job with one bar; Device1 shows the new firmware")
    func update() async throws {
        try await withHaloUpdate({ vf, ble, image in
            // A damaged image is refused before the glasses are touched.
            var bytes = try Data(contentsOf: URL(fileURLWithPath: image.path))
            bytes[bytes.count / 2] ^= 0xFF
            let damaged = ble.world.directory + "/damaged.signed.bin"
            try bytes.write(to: URL(fileURLWithPath: damaged))
            let refused = try await ble.world.glassctl(["update", "--json", damaged])
            #expect(!refused.ok)
            #expect(refused.stderr.contains(GlassdErrorName.invalidImage), "\(refused.stderr)")
            #expect(refused.stderr.contains("not a usable MCUboot image"), "\(refused.stderr)")
            let counters = try await vf.slotState()["counters"] as? [String: Int] ?? [:]
            #expect(counters["smp_upload_requests", default: 0] == 0, "\(counters)")
        }) { ble, vf, image, run, lines, _ in
            #expect(run.ok, "\(run.stderr)")
            let statuses = lines.compactMap { $0["status"] as? String }
            for phase in ["uploading-firmware", "testing", "restarting", "verifying", "confirming", "done"] {
                #expect(statuses.contains(phase), "no \(phase) in \(statuses)")
            }
            let percentages = lines.compactMap { ($0["percentage"] as? NSNumber)?.intValue }
            #expect(percentages == percentages.sorted(), "the bar went back: \(percentages)")
            #expect(lines.last?["success"] as? Bool == true, "\(lines.last ?? [:])")
            let state = try await vf.slotState()
            #expect(state["running_version"] as? String == "0.8.8", "\(state)")
            let ours = slot(state, hash: image.hash)
            #expect(ours?["active"] as? Bool == true && ours?["confirmed"] as? Bool == true, "\(state)")
            let counters = state["counters"] as? [String: Int] ?? [:]
            #expect(counters["smp_off0_writes"] == 1, "\(counters)")
            #expect(try await firmwareVersion(ble.world) == "0.8.8")
            let uploaded = ble.world.log().split(separator: "\n").first { $0.contains("firmware image uploaded") }
            #expect(uploaded?.contains("bytes=\(try Data(contentsOf: URL(fileURLWithPath: image.path)).count)") == true, "\(uploaded ?? "")")
        }
    }

    @Test("a drop mid-upload: glassd waits for the Halo and resumes from the offset it holds; one upload from zero")
    func dropResumes() async throws {
        try await withHaloUpdate({ vf, _, _ in
            try await vf.call("DropLinks", [.array(element: "s", [.string("smp 20000")])])
        }) { _, vf, image, run, lines, _ in
            #expect(run.ok, "\(run.stderr)")
            let drops = try await vf.call("LinkDrops").first?.elements?.first?.elements?.compactMap(\.string) ?? []
            #expect(drops == ["smp 20000"], "\(drops)")
            let state = try await vf.slotState()
            let counters = state["counters"] as? [String: Int] ?? [:]
            #expect(counters["smp_off0_writes"] == 1, "\(counters)")
            #expect(counters["smp_resumes", default: 0] >= 1, "\(counters)")
            #expect(slot(state, hash: image.hash)?["confirmed"] as? Bool == true, "\(state)")
        }
    }

    @Test("an image that crashes on its test boot: MCUboot reverts, the job fails saying the Halo went back to 0.8.7, nothing confirmed")
    func wentBack() async throws {
        try await withHaloUpdate({ vf, _, _ in try await vf.call("FailNextBoot", [.string("crash")]) }) { ble, vf, image, run, lines, _ in
            #expect(!run.ok)
            #expect(lines.last?["success"] as? Bool == false)
            let message = lines.last?["message"] as? String ?? ""
            #expect(message.contains("went back to version 0.8.7; nothing was confirmed"), "\(lines.last ?? [:])")
            let state = try await vf.slotState()
            #expect(state["running_version"] as? String == "0.8.7", "\(state)")
            #expect(slot(state, hash: image.hash)?["confirmed"] as? Bool != true, "\(state)")
            #expect(!(lines.compactMap { $0["status"] as? String }.contains("confirming")))
            #expect(try await firmwareVersion(ble.world) == "0.8.7")
        }
    }

    @Test("a new image whose app never answers: glassd resets the Halo, MCUboot reverts it, the job fails saying so")
    func silentReverted() async throws {
        try await withHaloUpdate(restartSeconds: 25, { vf, _, _ in try await vf.call("SilenceNextImage", [.bool(true)]) }) {
            _, vf, image, run, lines, boots in
            #expect(!run.ok)
            let message = lines.last?["message"] as? String ?? ""
            #expect(message.contains("glassd's app did not answer within 25 s"), "\(lines.last ?? [:])")
            #expect(message.contains("MCUboot reverts to the old image; nothing was confirmed"), "\(message)")
            try await VirtualFrame.waitForBooted(boots, version: "0.8.7")
            let state = try await vf.slotState()
            #expect(state["running_version"] as? String == "0.8.7", "\(state)")
            #expect(slot(state, hash: image.hash)?["confirmed"] as? Bool != true, "\(state)")
        }
    }

    @Test("firmware that confirms its own test image (0.8.8): healthy, done, no confirm needed")
    func selfConfirmed() async throws {
        try await withHaloUpdate({ vf, _, _ in try await vf.call("SetSelfConfirm", [.bool(true)]) }) { ble, vf, image, run, lines, _ in
            #expect(run.ok, "\(run.stderr)")
            #expect(lines.last?["success"] as? Bool == true)
            #expect(!(lines.compactMap { $0["status"] as? String }.contains("confirming")))
            let state = try await vf.slotState()
            #expect(slot(state, hash: image.hash)?["active"] as? Bool == true, "\(state)")
            #expect(try await firmwareVersion(ble.world) == "0.8.8")
        }
    }
}
