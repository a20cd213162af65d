// SPDX-License-Identifier: GPL-2.0-or-later
import Firmware
import GlassdCore
import Logging
import Glasses
import Monocle

/// Timing of an update.
public struct UpdateSettings: Sendable {
    /// The bootloader gives up after about 3 minutes; waiting for it as long covers a slow reset.
    public var bootloaderTimeout: Duration = .seconds(180)
    /// Looking for a bootloader that may not be there (after a drop mid-command, at start-up).
    public var bootloaderSearch: Duration = .seconds(30)
    /// Connection attempts to a bootloader that advertises, as Nordic's DFU libraries allow
    /// for their scan-and-retry.
    public var bootloaderConnectWindow: Duration = .seconds(60)
    /// From a reset to the glasses ready again (reconnect, handshake, scripts uploaded).
    public var restartTimeout: Duration = .seconds(180)
    /// Tries of one transfer: after a drop it resumes (firmware) or starts again (FPGA).
    public var attempts = 8
    public var dfu = DFUSettings()
    public var fpga = FPGAUpdateSettings()
    public var fpgaStream = FPGAStreamSettings()

    public init(bootloaderConnectWindow: Duration = .seconds(60)) {
        self.bootloaderConnectWindow = bootloaderConnectWindow
    }
}

/// Runs a planned update on the paired glasses: firmware over the bootloader (resumed after a
/// drop from what the bootloader holds), then the FPGA image (windowed, the REPL method as the
/// fallback, started again after a drop; the old image boots until the new one is verified),
/// then the glasses back as themselves with their scripts, their versions read again.
public struct UpdateRunner: Sendable {
    /// How the paired glasses enter their bootloader (nil: they cannot; only a resumed transfer).
    let bootloader: (any BootloaderEntry)?
    /// The paired glasses when they are a Monocle: only it has an FPGA.
    let monocle: MonocleSession<ContinuousClock>?
    let supervisor: any BootloaderLink
    let statuses: Watched<SessionStatus>
    let settings: UpdateSettings
    let job: any UpdateProgress
    let logger: Logger
    /// The glasses run their application again after the firmware step: the kept package goes.
    let firmwareDone: @Sendable () async -> Void

    public init(
        bootloader: (any BootloaderEntry)?, monocle: MonocleSession<ContinuousClock>?, supervisor: any BootloaderLink,
        statuses: Watched<SessionStatus>, settings: UpdateSettings, job: any UpdateProgress, logger: Logger,
        firmwareDone: @escaping @Sendable () async -> Void
    ) {
        self.bootloader = bootloader
        self.monocle = monocle
        self.supervisor = supervisor
        self.statuses = statuses
        self.settings = settings
        self.job = job
        self.logger = logger
        self.firmwareDone = firmwareDone
    }

    /// The glasses' versions at the end.
    public func run(_ images: UpdateImages, plan: UpdatePlan) async throws -> DeviceInfo? {
        var info = statuses.current.info
        if plan.firmware, let firmware = images.firmware {
            info = try await flash(firmware, inBootloader: false)
            try Self.verify(info, firmware: firmware.version)
        }
        if plan.fpga, let fpga = images.fpga {
            info = try await writeFPGA(fpga)
            try Self.verify(info, fpga: fpga.version)
        }
        return info
    }

    /// The glasses, back from the update's reset, run the firmware it was to install: a version
    /// they do not report (an image without a pinned version must still report one) or another
    /// one fails the job, saying what runs.
    public static func verify(_ info: DeviceInfo?, firmware wanted: String?) throws {
        guard let running = info?.firmwareVersion, !running.isEmpty else {
            throw UpdateFailure("The glasses report no firmware version after the update.")
        }
        if let wanted, running != wanted {
            throw UpdateFailure("The glasses run firmware \(running) after the update, not \(wanted).")
        }
    }

    /// The same for the FPGA: one whose version register reads blank did not start from the
    /// new image (an unconfigured FPGA reads 0xFF).
    public static func verify(_ info: DeviceInfo?, fpga wanted: String?) throws {
        let firmware = info.map { $0.firmwareVersion.isEmpty ? "" : " (they run firmware \($0.firmwareVersion))" } ?? ""
        guard let running = info?.fpgaVersion, !running.isEmpty else {
            throw UpdateFailure("The glasses report no FPGA version after the update: the FPGA did not start from the new image\(firmware).")
        }
        if let wanted, running != wanted {
            throw UpdateFailure("The glasses' FPGA runs \(running) after the update, not \(wanted)\(firmware).")
        }
    }

    // MARK: Firmware

    /// `inBootloader`: the glasses were found in their bootloader (an update cut short), so the
    /// firmware is sent without entering it.
    private func flash(_ firmware: UpdateImages.FirmwareImage, inBootloader: Bool) async throws -> DeviceInfo? {
        try job.enter(.enteringDFU)
        var before = statuses.current.generation
        // Whether update.micropython() reached the glasses (or they were found in their bootloader).
        var sent = inBootloader
        var attempt = 0
        while true {
            attempt += 1
            if !sent {
                before = try await ready().generation
                do {
                    guard let bootloader else { throw UpdateFailure("These glasses cannot be sent to their bootloader.") }
                    try await bootloader.enterBootloader()
                    sent = true
                } catch where Self.linkMayReturn(error) && attempt < settings.attempts {
                    // The link went with the command on its way: they may be in their bootloader already.
                    logger.notice("the link went while entering the bootloader", metadata: ["error": "\(error)"])
                }
            }
            // The application is gone until the bootloader boots the new image: stop chasing it.
            await supervisor.suspend()
            do {
                try await transfer(firmware, timeout: sent ? settings.bootloaderTimeout : settings.bootloaderSearch)
                break
            } catch {
                guard !Task.isCancelled, attempt < settings.attempts, Self.transferMayResume(error) else {
                    await supervisor.resume()
                    throw Self.explained(error)
                }
                if case LinkError.notFound = error, !sent {
                    await supervisor.resume()  // still running their application: enter again
                } else {
                    sent = true
                }
                logger.notice("the firmware transfer was interrupted; resuming", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
            }
        }
        await supervisor.resume()
        try job.enter(.restarting)
        let info = try await backAsThemselves(after: before)
        await firmwareDone()
        return info
    }

    /// One connection to the bootloader: the package sent, or resumed from what it holds.
    private func transfer(_ firmware: UpdateImages.FirmwareImage, timeout: Duration) async throws {
        try await supervisor.withBootloader(timeout: timeout, connectWindow: settings.bootloaderConnectWindow) { [job, settings] link in
            guard let control = link.channel(DFUChannel.control), let packet = link.channel(DFUChannel.packet) else {
                throw UpdateFailure("The bootloader has no DFU control point.")
            }
            try job.enter(.flashingFirmware)
            let dfu = SecureDFU(control: control, packet: packet, clock: ContinuousClock(), settings: settings.dfu)
            try await dfu.update(firmware.package) { progress in
                job.progress(.flashingFirmware, Double(progress.bytesDone) / Double(max(1, progress.totalBytes)))
            }
        }
    }

    /// After a stop of glassd mid-transfer: if the glasses' bootloader advertises, the package is
    /// sent (resumed from what it holds) and the glasses come back; nil when it does not appear
    /// (they run their application: nothing to resume).
    public func resumeFirmware(_ firmware: UpdateImages.FirmwareImage) async throws -> DeviceInfo? {
        try job.enter(.enteringDFU)
        await supervisor.suspend()
        do {
            try await transfer(firmware, timeout: settings.bootloaderSearch)
        } catch LinkError.notFound {
            await supervisor.resume()
            return nil
        } catch where Self.transferMayResume(error) && !Task.isCancelled {
            await supervisor.resume()
            let info = try await flash(firmware, inBootloader: true)
            try Self.verify(info, firmware: firmware.version)
            return info
        } catch {
            await supervisor.resume()
            throw Self.explained(error)
        }
        await supervisor.resume()
        try job.enter(.restarting)
        let info = try await backAsThemselves(after: 0)
        await firmwareDone()
        try Self.verify(info, firmware: firmware.version)
        return info
    }

    /// The link may come back: a drop, a closed channel, a REPL that went quiet.
    static func linkMayReturn(_ error: any Error) -> Bool {
        switch error {
        case SessionError.notConnected, ReplError.closed, ReplError.timeout, is ChannelError: true
        default: false
        }
    }

    /// A dropped link, a silent bootloader or one not found yet: the next try resumes. One that
    /// took no connection in the whole connect window is not tried again.
    static func transferMayResume(_ error: any Error) -> Bool {
        switch error {
        case DFUError.linkLost, DFUError.timeout, DFUError.lostNotifications: true
        case LinkError.unreachable: false
        case is LinkError, is ChannelError: true
        default: false
        }
    }

    /// An error that ends the job with the glasses in their bootloader says what brings them back.
    static func explained(_ error: any Error) -> any Error {
        guard case LinkError.unreachable(let message) = error else { return error }
        return UpdateFailure(message + " The glasses are left in their bootloader: glassctl update tries again.")
    }

    // MARK: FPGA

    private func writeFPGA(_ image: UpdateImages.FPGAImage) async throws -> DeviceInfo? {
        var windowed = true
        var before: UInt64 = 0
        try await retrying("the FPGA update", retryable: { error in
            // A failure of the fast path that is not the link's: the REPL method next time.
            if case FPGAUpdateError.repl(.closed) = error {} else { windowed = false }
            return Self.fpgaMayRetry(error)
        }) {
            _ = try await ready()
            try job.enter(.erasingFPGA)
            before = statuses.current.generation
            let method = windowed
            guard let monocle else { throw UpdateFailure("Only a Monocle has an FPGA to update.") }
            try await monocle.maintain { [job, settings, logger] lent in
                let progress: @Sendable (FPGAProgress) -> Void = { p in
                    let phase: UpdatePhase =
                        switch p.phase {
                        case .erasing: .erasingFPGA
                        case .writing: .writingFPGA
                        case .verifying: .verifying
                        }
                    job.progress(phase, Double(p.bytes) / Double(max(1, p.total)))
                }
                let report =
                    method
                    ? try await FPGAUpdate.runWindowed(
                        image: image.bytes, repl: lent.repl, data: lent.data, clock: ContinuousClock(),
                        settings: settings.fpga, stream: settings.fpgaStream, progress: progress)
                    : try await FPGAUpdate.run(image: image.bytes, repl: lent.repl, settings: settings.fpga, progress: progress)
                logger.info(
                    "FPGA image written and verified",
                    metadata: [
                        "bytes": "\(report.imageBytes)", "round_trips": "\(report.roundTrips)", "resends": "\(report.resends)",
                        "windowed": "\(method)",
                    ])
            }
        }
        try job.enter(.restarting)
        return try await backAsThemselves(after: before)
    }

    static func fpgaMayRetry(_ error: any Error) -> Bool {
        switch error {
        case FPGAUpdateError.emptyImage, FPGAUpdateError.imageTooLarge, FPGAUpdateError.cancelled: false
        case is FPGAUpdateError, is ReplError, is ChannelError, SessionError.busy, SessionError.notConnected: true
        default: false
        }
    }

    // MARK: Waiting for the glasses

    /// The glasses ready on a link newer than `generation`, their scripts uploaded on the way
    /// (the session does that on every link; shown as uploading-scripts).
    private func backAsThemselves(after generation: UInt64) async throws -> DeviceInfo? {
        let clock = ContinuousClock()
        let back = try await statuses.wait(timeout: settings.restartTimeout, clock: clock) {
            $0.generation > generation && ($0.state == .uploading || $0.state == .ready)
        }
        guard let back else { throw UpdateFailure("The glasses did not come back after the update.") }
        if back.state == .uploading { try job.enter(.uploadingScripts) }
        return try await ready().info
    }

    /// The glasses ready for the next step (after a drop the supervisor brings them back).
    private func ready() async throws -> SessionStatus {
        guard
            let status = try await statuses.wait(timeout: settings.restartTimeout, clock: ContinuousClock(), until: { $0.state == .ready })
        else { throw UpdateFailure("The glasses are not ready (\(statuses.current.state.rawValue)).") }
        return status
    }

    /// Runs `body` up to `settings.attempts` times while its failures are `retryable`.
    private func retrying(
        _ what: String, retryable: (any Error) -> Bool, _ body: () async throws -> Void
    ) async throws {
        var attempt = 1
        while true {
            do {
                return try await body()
            } catch {
                guard !Task.isCancelled, !(error is CancellationError), attempt < settings.attempts, retryable(error) else { throw error }
                logger.notice("\(what) was interrupted; trying again", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
                attempt += 1
            }
        }
    }
}

/// An update step that failed for a reason said in a sentence.
public struct UpdateFailure: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
