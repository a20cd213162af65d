// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import FakeKinds
import Foundation
import Glasses
import LinkKit
import Logging
import Synchronization
@testable import Updates

final class Recorded: UpdateProgress {
    let phases = Mutex<[UpdatePhase]>([])
    func enter(_ phase: UpdatePhase) throws { phases.withLock { $0.append(phase) } }
    func progress(_ phase: UpdatePhase, _ fraction: Double) {}
}

/// Glasses without a bootloader to reach: the arm updater never asks for one.
struct NoBootloader: BootloaderLink {
    func suspend() async {}
    func resume() async {}
    func withBootloader<T: Sendable>(
        timeout: Duration, connectWindow: Duration, _ body: @escaping @Sendable (any GlassesLink) async throws -> T
    ) async throws -> T {
        throw LinkError.notFound("no bootloader")
    }
    func dropLink(reason: String) async {}
}

extension ComponentImage {
    static func sha256(_ bytes: [UInt8]) -> String {
        (try? sha256(bytes, of: "test", pinned: nil)) ?? ""
    }
}

/// A one-radio kind whose only component is its firmware, which can be finished from a
/// bootloader (as a Nordic DFU firmware can): only what admission asks of it is real.
struct BootUpdater: ComponentUpdater {
    let component = "firmware"
    let label = "firmware"
    var recovers: Bool { true }

    func prepare(_ file: [UInt8], version: String?, pinned sha256: String?) throws(UpdateRefusal) -> ComponentImage {
        ComponentImage(component: component, file: file, version: version, sha256: try ComponentImage.sha256(file, of: "firmware", pinned: sha256), payload: file)
    }

    func phases(_ image: ComponentImage) -> [(UpdatePhase, Double)] { [(.restarting, 1)] }

    func apply(_ image: ComponentImage, _ context: UpdateContext) async throws -> DeviceInfo? {
        throw UpdateFailure("not in these tests")
    }
}

func solo() -> GlassesKind {
    GlassesKind(
        names: [GlassesKindName("solo")], title: "a solo", advertisedService: "0000fe01-0000-1000-8000-00805f9b34fb",
        profile: GATTProfile(name: "solo", channels: []), bonds: false, updaters: [BootUpdater()],
        makeSession: { _ in IdleSession() }, identify: { _ in nil })
}
