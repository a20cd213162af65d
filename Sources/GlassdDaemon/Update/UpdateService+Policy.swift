// SPDX-License-Identifier: GPL-2.0-or-later
import Bluetooth
import Concurrency
import DBusKit
import Foundation
import GlassdAPI
import GlassdContract
import Glasses
import LinkKit
import Logging
import Storage
import Synchronization
import Updates

/// The automatic policy: outdated glasses marked, updated with `auto`, and updates cut short resumed.
extension UpdateService {
    /// Watches the glasses: an outdated device is marked update-required (and updated, with
    /// `auto`, as are glasses found in their bootloader); an update cut short by a stop of glassd
    /// is recorded as such.
    func run() async {
        _ = try? await history.closeInterrupted(reason: "glassd stopped during the update", at: unixMS())
        await resumeInterrupted()
        await withDiscardingTaskGroup { group in
            group.addTask { await self.watchVersions() }
            if policy.auto { group.addTask { await self.watchBootloader() } }
        }
    }

    /// With `auto`: glasses seen in their bootloader (with no package of glassd's kept: that one
    /// is resumed at the start) get the pinned firmware.
    private func watchBootloader() async {
        for await sighted in supervisor.bootloaderSighted.values() where sighted && !isBusy {
            guard (try? await history.pendingPackage()) == nil else { continue }
            do {
                let kind = await pairedKind()
                let images = try UpdateImages.fromManifest(in: policy.firmwareDirectory, kinds: kinds, paired: kind)
                guard let recovering = kind.recoveringUpdater, images[recovering.component] != nil else { continue }
                if let mismatch = UpdateAdmission.mismatch(images, kind: kind, kinds: kinds) {
                    logger.notice("automatic recovery from the bootloader not started: \(mismatch)")
                    continue
                }
                logger.notice("automatic update: the glasses are in their bootloader; sending the pinned \(recovering.label)")
                _ = try await resume(images)
            } catch {
                logger.notice("automatic recovery from the bootloader not started: \(error)")
            }
        }
    }

    private func watchVersions() async {
        var checked: UInt64?
        for await status in statuses.values() {
            guard status.state == .ready, status.generation != checked, !isBusy, let info = status.info else { continue }
            checked = status.generation
            mark.set(await requiredMark(info))
            guard policy.auto, case .required(let reason) = mark.current else { continue }
            if let battery = info.battery, battery < policy.minBattery {
                logger.notice("automatic update skipped: battery at \(battery) %")
                continue
            }
            do {
                let images = try UpdateImages.fromManifest(in: policy.firmwareDirectory, kinds: kinds)
                logger.info("automatic update: \(reason)")
                _ = try await start(images, plan: UpdatePlan.make(images, device: info, force: false))
            } catch {
                logger.notice("automatic update not started: \(error)")
            }
        }
    }

    /// A firmware transfer cut short by a stop of glassd (or one that failed with the glasses in
    /// their bootloader) goes on from what the bootloader holds.
    private func resumeInterrupted() async {
        do {
            guard let pending = try await history.pendingPackage() else { return }
            guard await supervisor.snapshot().paired?.description == pending.device else {
                try await history.dropPackage()
                return
            }
            logger.notice("resuming the firmware update glassd stopped in", metadata: ["device": "\(pending.device)"])
            _ = try await resume(try await images(pending))
        } catch {
            logger.warning("cannot resume the interrupted update: \(error)")
        }
    }

    /// The kept image of an update that may have left the glasses in their bootloader.
    func images(_ pending: (device: String, bytes: [UInt8], version: String?)) async throws -> UpdateImages {
        guard let recovering = await pairedKind().recoveringUpdater else {
            throw UpdateRefusal.image("The paired glasses have no update step to finish.")
        }
        return UpdateImages([try recovering.prepare(pending.bytes, version: pending.version, pinned: nil)])
    }

    func requiredMark(_ info: DeviceInfo?) async -> UpdateMark {
        guard let info, let images = try? UpdateImages.fromManifest(in: policy.firmwareDirectory, kinds: kinds),
            UpdateAdmission.mismatch(images, kind: await pairedKind(), kinds: kinds) == nil,
            let reason = UpdatePlan.outdated(images, device: info, kind: await pairedKind())
        else { return .none }
        return .required(reason)
    }
}
