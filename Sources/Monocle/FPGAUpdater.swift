// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Glasses
import LinkKit
import Logging

/// A Monocle's FPGA image: written windowed over the data channel (the REPL method as the
/// fallback), started again after a drop; the old image boots until the new one is verified and
/// marked done, so Cancel may stop it.
public struct FPGAUpdater: ComponentUpdater {
    public static let erasingFPGA = UpdatePhase("erasing-fpga", cancelRefusal: nil)
    public static let writingFPGA = UpdatePhase("writing-fpga", cancelRefusal: nil)
    public static let verifying = UpdatePhase("verifying", cancelRefusal: nil)

    public static let name = "fpga"
    public let component = FPGAUpdater.name
    public let label = "FPGA"
    public var settings: FPGAUpdateSettings
    public var stream: FPGAStreamSettings

    public init(settings: FPGAUpdateSettings = FPGAUpdateSettings(), stream: FPGAStreamSettings = FPGAStreamSettings()) {
        self.settings = settings
        self.stream = stream
    }

    public func prepare(_ file: [UInt8], version: String?, pinned sha256: String?) throws(UpdateRefusal) -> ComponentImage {
        let digest = try ComponentImage.sha256(file, of: "FPGA image", pinned: sha256)
        guard !file.isEmpty else { throw .image("The FPGA image is empty.") }
        guard file.count <= FPGACommands.doneOffset else {
            throw .image("The FPGA image has \(file.count) bytes; the Monocle holds at most \(FPGACommands.doneOffset).")
        }
        return ComponentImage(component: component, file: file, version: version, sha256: digest, payload: file)
    }

    public func phases(_ image: ComponentImage) -> [(UpdatePhase, Double)] {
        let kib = max(1, Double(image.file.count) / 4096)
        return [(Self.erasingFPGA, 5), (Self.writingFPGA, kib), (Self.verifying, kib / 10), (.restarting, 3)]
    }

    public func apply(_ image: ComponentImage, _ context: UpdateContext) async throws -> DeviceInfo? {
        guard let monocle = context.session as? MonocleSession<ContinuousClock> else {
            throw UpdateFailure("Only a Monocle has an FPGA to update.")
        }
        let job = context.job
        let logger = context.logger
        let (settings, stream) = (self.settings, self.stream)
        var windowed = true
        var before: UInt64 = 0
        do {
            try await context.retrying(
                "the FPGA update",
                retryable: { error in
                    // A failure of the fast path that is not the link's: the REPL method next time.
                    if case FPGAUpdateError.repl(.closed) = error {} else { windowed = false }
                    return Self.mayRetry(error)
                }
            ) {
                _ = try await context.ready()
                try job.enter(Self.erasingFPGA)
                before = context.statuses.current.generation
                let method = windowed
                try await monocle.maintain { lent in
                    let progress: @Sendable (FPGAProgress) -> Void = { p in
                        let phase =
                            switch p.phase {
                            case .erasing: Self.erasingFPGA
                            case .writing: Self.writingFPGA
                            case .verifying: Self.verifying
                            }
                        job.progress(phase, Double(p.bytes) / Double(max(1, p.total)))
                    }
                    let report =
                        method
                        ? try await FPGAUpdate.runWindowed(
                            image: image.file, repl: lent.repl, data: lent.data, clock: ContinuousClock(), settings: settings,
                            stream: stream, progress: progress)
                        : try await FPGAUpdate.run(image: image.file, repl: lent.repl, settings: settings, progress: progress)
                    logger.info(
                        "FPGA image written and verified",
                        metadata: [
                            "bytes": "\(report.imageBytes)", "round_trips": "\(report.roundTrips)", "resends": "\(report.resends)",
                            "windowed": "\(method)",
                        ])
                }
            }
        } catch FPGAUpdateError.cancelled {
            throw CancellationError()
        }
        try job.enter(.restarting)
        return try await context.backAsThemselves(after: before)
    }

    /// One whose version register reads blank did not start from the new image (an unconfigured
    /// FPGA reads 0xFF).
    public func verify(_ info: DeviceInfo?, wanted: String?) throws {
        let firmware = info.map { $0.firmwareVersion.isEmpty ? "" : " (they run firmware \($0.firmwareVersion))" } ?? ""
        let running = info?.version(of: component) ?? ""
        guard !running.isEmpty else {
            throw UpdateFailure("The glasses report no FPGA version after the update: the FPGA did not start from the new image\(firmware).")
        }
        if let wanted, running != wanted {
            throw UpdateFailure("The glasses' FPGA runs \(running) after the update, not \(wanted)\(firmware).")
        }
    }

    static func mayRetry(_ error: any Error) -> Bool {
        switch error {
        case FPGAUpdateError.emptyImage, FPGAUpdateError.imageTooLarge, FPGAUpdateError.cancelled: false
        case is FPGAUpdateError, is ReplError, is ChannelError, SessionError.busy, SessionError.notConnected: true
        default: false
        }
    }
}
