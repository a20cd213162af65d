// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Glasses
import LinkKit
import Logging

/// The firmware of glasses with a Nordic Secure DFU bootloader (Monocle, Frame): the glasses are
/// sent to their bootloader (their session is a `BootloaderEntry`), the package goes over its DFU
/// channels, resumed after a drop from what the bootloader holds, and the glasses come back as
/// themselves. A step cut short leaves them in their bootloader: it `recovers`.
public struct NordicDFUUpdater: ComponentUpdater {
    public static let enteringDFU = UpdatePhase(
        "entering-dfu",
        cancelRefusal: "The glasses are in their bootloader: stopping now would leave them without firmware until an update completes.")
    public static let flashingFirmware = UpdatePhase("flashing-firmware", cancelRefusal: enteringDFU.cancelRefusal)

    public let component = ComponentName.firmware
    public let label = "firmware"
    public var settings: DFUSettings

    public init(settings: DFUSettings = DFUSettings()) { self.settings = settings }

    public func prepare(_ file: [UInt8], version: String?, pinned sha256: String?) throws(UpdateRefusal) -> ComponentImage {
        let package: DFUPackage
        do {
            package = try DFUPackage(bytes: file, pinnedSHA256: sha256)
        } catch {
            throw .image("The firmware package is not usable: \(error).")
        }
        return ComponentImage(component: component, file: file, version: version, sha256: package.sha256, payload: package)
    }

    /// A firmware byte over the DFU link costs about as much as an FPGA byte; entering the
    /// bootloader and restarting cost a few seconds.
    public func phases(_ image: ComponentImage) -> [(UpdatePhase, Double)] {
        let bytes = (image.payload as? DFUPackage)?.image.count ?? image.file.count
        return [(Self.enteringDFU, 3), (Self.flashingFirmware, max(1, Double(bytes) / 4096)), (.restarting, 3)]
    }

    public var recovers: Bool { true }

    public func apply(_ image: ComponentImage, _ context: UpdateContext) async throws -> DeviceInfo? {
        try await flash(try package(image), inBootloader: false, context)
    }

    /// If the glasses' bootloader advertises, the package is sent (resumed from what it holds)
    /// and the glasses come back; nil when it does not appear (they run their application).
    public func recover(_ image: ComponentImage, _ context: UpdateContext) async throws -> DeviceInfo? {
        let package = try package(image)
        try context.job.enter(Self.enteringDFU)
        await context.link.suspend()
        do {
            try await transfer(package, timeout: context.settings.bootloaderSearch, context)
        } catch LinkError.notFound {
            await context.link.resume()
            return nil
        } catch where Self.transferMayResume(error) && !Task.isCancelled {
            await context.link.resume()
            return try await flash(package, inBootloader: true, context)
        } catch {
            await context.link.resume()
            throw Self.explained(error)
        }
        await context.link.resume()
        try context.job.enter(.restarting)
        let info = try await context.backAsThemselves(after: 0)
        await context.recovered()
        return info
    }

    private func package(_ image: ComponentImage) throws -> DFUPackage {
        guard let package = image.payload as? DFUPackage else { throw UpdateFailure("The firmware image was not prepared as a DFU package.") }
        return package
    }

    /// `inBootloader`: the glasses were found in their bootloader (an update cut short), so the
    /// firmware is sent without entering it.
    private func flash(_ package: DFUPackage, inBootloader: Bool, _ context: UpdateContext) async throws -> DeviceInfo? {
        let settings = context.settings
        try context.job.enter(Self.enteringDFU)
        var before = context.statuses.current.generation
        // Whether the command reached the glasses (or they were found in their bootloader).
        var sent = inBootloader
        var attempt = 0
        while true {
            attempt += 1
            if !sent {
                before = try await context.ready().generation
                do {
                    guard let entry = context.session as? any BootloaderEntry else {
                        throw UpdateFailure("These glasses cannot be sent to their bootloader.")
                    }
                    try await entry.enterBootloader()
                    sent = true
                } catch where Self.linkMayReturn(error, context.session) && attempt < settings.attempts {
                    // The link went with the command on its way: they may be in their bootloader already.
                    context.logger.notice("the link went while entering the bootloader", metadata: ["error": "\(error)"])
                }
            }
            // The application is gone until the bootloader boots the new image: stop chasing it.
            await context.link.suspend()
            do {
                try await transfer(package, timeout: sent ? settings.bootloaderTimeout : settings.bootloaderSearch, context)
                break
            } catch {
                guard !Task.isCancelled, attempt < settings.attempts, Self.transferMayResume(error) else {
                    await context.link.resume()
                    throw Self.explained(error)
                }
                if case LinkError.notFound = error, !sent {
                    await context.link.resume()  // still running their application: enter again
                } else {
                    sent = true
                }
                context.logger.notice(
                    "the firmware transfer was interrupted; resuming", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
            }
        }
        await context.link.resume()
        try context.job.enter(.restarting)
        let info = try await context.backAsThemselves(after: before)
        await context.recovered()
        return info
    }

    /// One connection to the bootloader: the package sent, or resumed from what it holds.
    private func transfer(_ package: DFUPackage, timeout: Duration, _ context: UpdateContext) async throws {
        let job = context.job
        try await context.link.withBootloader(timeout: timeout, connectWindow: context.settings.bootloaderConnectWindow) {
            [settings] link in
            guard let control = link.channel(DFUChannel.control), let packet = link.channel(DFUChannel.packet) else {
                throw UpdateFailure("The bootloader has no DFU control point.")
            }
            try job.enter(Self.flashingFirmware)
            let dfu = SecureDFU(control: control, packet: packet, clock: ContinuousClock(), settings: settings)
            try await dfu.update(package) { progress in
                job.progress(Self.flashingFirmware, Double(progress.bytesDone) / Double(max(1, progress.totalBytes)))
            }
        }
    }

    /// The link may come back: a drop, a closed channel, or what the kind's session says of its own errors.
    static func linkMayReturn(_ error: any Error, _ session: any Sendable) -> Bool {
        switch error {
        case SessionError.notConnected, is ChannelError: true
        default: (session as? any BootloaderEntry)?.linkMayReturn(after: error) ?? false
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
}
