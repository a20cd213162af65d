// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Glasses
import LinkKit
import Logging

/// Sizes of an MCUmgr update.
public struct MCUmgrUpdateSettings: Sendable {
    /// The request size when the glasses do not report their SMP buffer: Zephyr's default
    /// netbuf, and the chunk Brilliant's own tool sends.
    public var fallbackBufferSize = 384
    public var client = SMPClientOptions()

    public init() {}
}

/// The firmware of glasses that boot MCUboot images and take them over MCUmgr's SMP service
/// while their application runs (Halo): the image is uploaded (resumed from the offset the
/// glasses hold after a drop), marked for a test boot, and the glasses reset. MCUboot runs it
/// once and reverts it at the next reset unless it is confirmed: glassd confirms it only once
/// the glasses came back with the new image, report its version, and glassd's app answers.
public struct MCUmgrUpdater: ComponentUpdater {
    /// Nothing runs differently until the test boot is marked: Cancel leaves the glasses as they were.
    public static let uploadingFirmware = UpdatePhase("uploading-firmware", cancelRefusal: nil)
    static let underTest = "The new image is on its test boot; the update ends once glassd has checked it."
    public static let testing = UpdatePhase("testing", cancelRefusal: underTest)
    public static let verifying = UpdatePhase("verifying", cancelRefusal: underTest)
    public static let confirming = UpdatePhase("confirming", cancelRefusal: underTest)

    public let component = ComponentName.firmware
    public let label = "firmware"
    public var settings: MCUmgrUpdateSettings

    public init(settings: MCUmgrUpdateSettings = MCUmgrUpdateSettings()) { self.settings = settings }

    public func prepare(_ file: [UInt8], version: String?, pinned sha256: String?) throws(UpdateRefusal) -> ComponentImage {
        let digest = try ComponentImage.sha256(file, of: "firmware image", pinned: sha256)
        let image: MCUbootImage
        do {
            image = try MCUbootImage(bytes: file)
        } catch {
            throw .image("The firmware image is not a usable MCUboot image: \(error).")
        }
        return ComponentImage(component: component, file: file, version: version, sha256: digest, payload: image)
    }

    /// Uploading costs about what a DFU transfer does per byte; the restart includes the swap.
    public func phases(_ image: ComponentImage) -> [(UpdatePhase, Double)] {
        [(Self.uploadingFirmware, max(1, Double(image.file.count) / 4096)), (Self.testing, 1), (.restarting, 8), (Self.verifying, 1), (Self.confirming, 1)]
    }

    public func apply(_ image: ComponentImage, _ context: UpdateContext) async throws -> DeviceInfo? {
        guard let file = image.payload as? MCUbootImage else { throw UpdateFailure("The firmware image was not prepared as an MCUboot image.") }
        guard let access = context.session as? any UpdateChannelAccess else {
            throw UpdateFailure("These glasses are not updated over MCUmgr.")
        }
        let link = SMPLink(
            access: access, statuses: context.statuses, restartTimeout: context.settings.restartTimeout,
            attempts: context.settings.attempts, options: settings.client, logger: context.logger)
        let state = try await link.run("reading the image state") { try await $0.imageState() }
        if let active = state.active {
            if active.hash == file.tlvHash {
                // A test boot of this image nobody confirmed yet (glassd stopped on the way): check it.
                if !active.confirmed { return try await health(file, link, before: 0, context) }
                context.logger.info("the glasses already run this image", metadata: ["version": "\(active.version)"])
                return context.statuses.current.info
            }
            if !active.confirmed {
                throw UpdateFailure(
                    "The glasses run firmware \(Self.normalized(active.version)) on a test boot nobody confirmed: confirm or revert it first (a restart of the glasses reverts it). Nothing was changed.")
            }
        }
        if let held = state.slot(withHash: file.tlvHash), !held.active {
            context.logger.info("the glasses already hold this image; not uploading it again", metadata: ["slot": "\(held.slot)"])
            try context.job.enter(Self.uploadingFirmware)
        } else {
            try await upload(file, link, context)
        }
        try context.job.enter(Self.testing)
        let marked = try await link.run("marking the test boot") { try await $0.setImageState(hash: file.tlvHash, confirm: false) }
        guard marked.slot(withHash: file.tlvHash)?.pending == true else {
            throw UpdateFailure("The glasses did not mark the new image for a test boot; nothing was changed.")
        }
        try context.job.enter(.restarting)
        let before = context.statuses.current.generation
        try await reset(link, context)
        return try await health(file, link, before: before, context)
    }

    /// The upload from the offset the glasses hold: each try starts with the request that names
    /// the upload (offset 0, length, SHA-256), which the glasses answer with what they have.
    func upload(_ file: MCUbootImage, _ link: SMPLink, _ context: UpdateContext) async throws {
        let job = context.job
        try job.enter(Self.uploadingFirmware)
        let upload = ImageUpload(file)
        let total = file.bytes.count
        let fallback = settings.fallbackBufferSize
        let clock = ContinuousClock()
        let started = clock.now
        var requests = 0
        try await link.run("the firmware upload") { client in
            let limit = min(try await client.mcumgrParameters().bufferSize(or: fallback), client.maxRequestSize)
            var offset = 0
            var first = true
            var stalls = 0
            while true {
                let size = upload.chunkCapacity(offset: offset, frameLimit: limit)
                guard size > 0 else { throw UpdateFailure("The glasses' SMP buffer (\(limit) bytes) is too small for an upload.") }
                let answer = try await client.upload(
                    upload, offset: offset, data: file.bytes[offset..<offset + size],
                    timeout: first ? ImageUploadTimeouts.firstChunk : ImageUploadTimeouts.chunk)
                requests += 1
                guard answer.offset <= total else {
                    throw UpdateFailure("The glasses asked for byte \(answer.offset) of a \(total)-byte image.")
                }
                if first && answer.offset > size { context.logger.notice("the upload resumes", metadata: ["offset": "\(answer.offset)"]) }
                stalls = answer.offset > offset ? 0 : stalls + 1
                guard stalls < 3 else { throw UpdateFailure("The glasses stopped taking the upload at byte \(offset).") }
                first = false
                offset = answer.offset
                job.progress(Self.uploadingFirmware, Double(offset) / Double(max(1, total)))
                if offset == total {
                    if answer.match == false { throw UpdateFailure("The glasses received the image, but its SHA-256 does not match.") }
                    let seconds = Double((clock.now - started) / .milliseconds(1)) / 1000
                    context.logger.info(
                        "firmware image uploaded",
                        metadata: [
                            "bytes": "\(total)", "requests": "\(requests)", "frame_limit": "\(limit)", "seconds": "\(seconds)",
                            "bytes_per_s": "\(Int(Double(total) / max(seconds, 0.001)))",
                        ])
                    return
                }
            }
        }
    }

    /// Proven in `apply` (the active image's hash and the version the app reports); here the
    /// reported version against a pinned one.
    public func verify(_ info: DeviceInfo?, wanted: String?) throws {
        let running = Self.normalized(info?.firmwareVersion ?? "")
        guard !running.isEmpty else { throw UpdateFailure("The glasses report no firmware version after the update.") }
        if let wanted, running != Self.normalized(wanted) {
            throw UpdateFailure("The glasses run firmware \(running) after the update, not \(wanted).")
        }
    }

    /// "0.8.8" for "v0.8.8", "0.8.8.0" and "0.8.8+0": the build number only when not 0.
    static func normalized(_ version: String) -> String {
        var text = version.hasPrefix("v") ? String(version.dropFirst()) : version
        for suffix in [".0", "+0"] {
            if text.split(separator: ".").count == (suffix == ".0" ? 4 : 3), text.hasSuffix(suffix) { text.removeLast(2) }
        }
        return text
    }
}
