// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Glasses
import Logging

extension MCUmgrUpdater {
    /// OS reset: the glasses answer, then restart (the link drops, maybe before the answer).
    func reset(_ link: SMPLink, _ context: UpdateContext) async throws {
        let (client, _) = try await link.client()
        do {
            try await client.reset()
        } catch where SMPLink.linkWent(error) || error is SMPClientError {
            context.logger.info("the link went with the reset", metadata: ["error": "\(error)"])
        }
    }

    /// Whether the test boot is healthy: the glasses back as themselves on a link newer than
    /// `before`, the new image active, its version reported, glassd's app answering. Only then
    /// is the image confirmed. A drop anywhere after the test boot was marked lands here.
    func health(_ file: MCUbootImage, _ link: SMPLink, before: UInt64, _ context: UpdateContext) async throws -> DeviceInfo? {
        let wanted = file.version.normalized
        var before = before
        var resent = false
        while true {
            var info: DeviceInfo?
            var silent = false
            do {
                info = try await context.backAsThemselves(after: before)
            } catch let failure as UpdateFailure {
                context.logger.notice("the glasses did not come back as themselves", metadata: ["error": "\(failure)"])
                silent = true
            }
            try context.job.enter(Self.verifying)
            let state = try await link.run("reading the image state") { try await $0.imageState() }
            guard let active = state.active else { throw UpdateFailure("The glasses report no running image.") }
            let running = Self.normalized(active.version)
            guard active.hash == file.tlvHash else {
                if state.slot(withHash: file.tlvHash)?.pending == true, !silent, !resent {
                    // The reset did not reach them (the link went first): send it again.
                    resent = true
                    before = context.statuses.current.generation
                    try context.job.enter(.restarting)
                    try await reset(link, context)
                    continue
                }
                if silent {
                    throw UpdateFailure("The glasses went back to version \(running), and glassd's app does not answer; nothing was confirmed.")
                }
                throw UpdateFailure("The glasses went back to version \(running); nothing was confirmed.")
            }
            let seconds = context.settings.restartTimeout.components.seconds
            if silent {
                if active.confirmed {
                    throw UpdateFailure(
                        "The new image (firmware \(wanted)) runs and confirmed itself, but glassd's app on the glasses does not answer.")
                }
                try await reset(link, context)
                throw UpdateFailure(
                    "The new image (firmware \(wanted)) started, but glassd's app did not answer within \(seconds) s: the glasses were reset and MCUboot reverts to the old image; nothing was confirmed.")
            }
            let reported = Self.normalized(info?.firmwareVersion ?? "")
            guard reported == wanted else {
                if active.confirmed {
                    throw UpdateFailure("The new image runs and confirmed itself, but the glasses report firmware \(reported), not \(wanted).")
                }
                try await reset(link, context)
                throw UpdateFailure(
                    "The new image runs, but the glasses report firmware \(reported), not \(wanted): they were reset and MCUboot reverts to the old image; nothing was confirmed.")
            }
            if active.confirmed {
                context.logger.info("the new image confirmed itself and glassd's app answers", metadata: ["version": "\(wanted)"])
                return info
            }
            try context.job.enter(Self.confirming)
            let confirmed = try await link.run("confirming the image") { try await $0.setImageState(hash: file.tlvHash, confirm: true) }
            guard confirmed.slot(withHash: file.tlvHash)?.confirmed == true else {
                throw UpdateFailure("The glasses did not confirm the new image (firmware \(wanted)).")
            }
            context.logger.info("the new image is healthy and confirmed", metadata: ["version": "\(wanted)"])
            return info
        }
    }
}
