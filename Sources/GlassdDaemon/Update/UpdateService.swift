// SPDX-License-Identifier: GPL-2.0-or-later
import Bluetooth
import DBusKit
import Firmware
import Foundation
import GlassdAPI
import GlassdContract
import GlassdCore
import Logging
import Updates
import Glasses
import Monocle
import Storage
import Synchronization

/// What an update adds to the paired device's State.
enum UpdateMark: Sendable, Equatable {
    case none
    /// The glasses run other versions than the pinned ones: the reason.
    case required(String)
    case updating
}

/// What decides updates (from the config).
struct UpdatePolicy: Sendable {
    var firmwareDirectory: String
    /// Apply pinned images when the glasses connect, not only on Update.
    var auto: Bool
    var minBattery: UInt8
}

/// Updates of the paired glasses, one job at a time: Manager1.Update and UpdateHistory, the
/// update mark on the device's State, and the automatic policy.
final class UpdateService: Sendable {
    let connection: BusConnection
    /// The glasses' sessions: the one that served the last link is the paired glasses' kind.
    let sessions: SessionRouter
    let supervisor: LinkSupervisor
    let statuses: Watched<SessionStatus>
    let history: SQLiteUpdateHistory
    let policy: UpdatePolicy
    let settings: UpdateSettings
    let logger: Logger
    /// Shared with the link interface, which shows it on the device's State.
    let mark: Watched<UpdateMark>
    /// The mark the link interface shows now.
    let markShown: Watched<UpdateMark>

    private struct Jobs {
        var next: UInt32 = 1
        var running: UpdateJob?
        /// Ended jobs stay on the bus for late readers, the newest few.
        var ended: [UpdateJob] = []
    }

    private let jobs = Mutex(Jobs())
    static let endedJobsKept = 8

    init(
        connection: BusConnection, sessions: SessionRouter, supervisor: LinkSupervisor,
        statuses: Watched<SessionStatus>, history: SQLiteUpdateHistory, policy: UpdatePolicy,
        settings: UpdateSettings = UpdateSettings(), mark: Watched<UpdateMark>, markShown: Watched<UpdateMark>,
        logger: Logger
    ) {
        self.mark = mark
        self.markShown = markShown
        self.connection = connection
        self.sessions = sessions
        self.supervisor = supervisor
        self.statuses = statuses
        self.history = history
        self.policy = policy
        self.settings = settings
        self.logger = logger
    }

    /// True while an update runs: Pair, Unpair and Display answer Busy.
    var isBusy: Bool { jobs.withLock { $0.running != nil } }

    var methods: [InterfaceSpec.Method] {
        [
            GlassdBus.Manager1.Update.method { [self] call in
                [.objectPath(try await update(call))]
            },
            Self.historyMethod(history, logger: logger),
        ]
    }

    // MARK: Update

    private func update(_ call: MethodCall) async throws -> String {
        let options = try await UpdatePaths.checked(
            try UpdateOptions(call.arguments.first), sender: call.sender, firmwareDirectory: policy.firmwareDirectory,
            connection: connection)
        guard !isBusy else { throw BusError(name: GlassdErrorName.busy, message: "An update is already running.") }
        guard await supervisor.snapshot().paired != nil else {
            throw BusError(name: GlassdErrorName.notPaired, message: "No glasses are paired.")
        }
        let status = statuses.current
        if status.state != .ready, let pending = try? await history.pendingPackage(),
            pending.device == (await supervisor.snapshot().paired?.description)
        {
            // An earlier update left the glasses in their bootloader: go on with its package
            // (no files needed).
            do {
                return try await resume(try Self.images(pending)).path
            } catch let refusal as UpdateRefusal {
                throw refusal.busError
            }
        }
        let images: UpdateImages
        do {
            images = try UpdateImages.load(firmware: options.firmware, fpga: options.fpga, directory: policy.firmwareDirectory)
        } catch {
            logger.notice("update refused: \(error.message)")
            throw error.busError
        }
        if let mismatch = await mismatch(images) {
            logger.notice("update refused: \(mismatch)")
            throw BusError(name: GlassdErrorName.invalidImage, message: mismatch)
        }
        if status.state != .ready, images.firmware != nil, supervisor.bootloaderSighted.current {
            // Left in their bootloader by something glassd kept no package of (another tool, a
            // lost database): the given firmware brings them back, sent as a resumed transfer.
            logger.notice("the glasses are in their bootloader: sending the given firmware")
            return try await resume(images).path
        }
        guard status.state == .ready else {
            throw BusError(
                name: status.state == .busy ? GlassdErrorName.busy : GlassdErrorName.notConnected,
                message: "The glasses must be connected and idle for an update (they are \(status.state.rawValue)).")
        }
        let plan = UpdatePlan.make(images, device: status.info, force: options.force)
        // Nothing to send needs no battery.
        if !plan.isEmpty, !options.force, let battery = status.info?.battery, battery < policy.minBattery {
            throw BusError(
                name: GlassdErrorName.batteryLow,
                message: "The glasses' battery is at \(battery) %, below \(policy.minBattery) %: charge them first, or force.")
        }
        return try await start(images, plan: plan).path
    }

    /// A job that sends the firmware to glasses in their bootloader, from what it holds.
    private func resume(_ images: UpdateImages) async throws -> UpdateJob {
        try await start(images, plan: UpdatePlan(firmware: true, fpga: false), resuming: true)
    }

    /// Puts a job on the bus and runs it; `resuming`: the firmware of an update glassd stopped in.
    private func start(_ images: UpdateImages, plan: UpdatePlan, resuming: Bool = false) async throws -> UpdateJob {
        let bar = ProgressBar.plan(
            firmwareBytes: plan.firmware ? images.firmware?.package.image.count : nil,
            fpgaBytes: plan.fpga ? images.fpga?.bytes.count : nil)
        let job = try jobs.withLock { j throws(BusError) -> UpdateJob in
            guard j.running == nil else { throw BusError(name: GlassdErrorName.busy, message: "An update is already running.") }
            let job = UpdateJob(number: j.next, bar: bar, connection: connection)
            j.next += 1
            j.running = job
            return job
        }
        mark.set(.updating)
        do {
            try await connection.export(job.spec, at: job.path, announce: true)
        } catch {
            jobs.withLock { $0.running = nil }
            mark.set(.none)
            throw error
        }
        let task = Task { await execute(job, images, plan, resuming: resuming) }
        job.onCancel { task.cancel() }
        logger.info("update started", metadata: ["job": "\(job.path)", "firmware": "\(plan.firmware)", "fpga": "\(plan.fpga)"])
        return job
    }

    private func execute(_ job: UpdateJob, _ images: UpdateImages, _ plan: UpdatePlan, resuming: Bool) async {
        let device = await supervisor.snapshot().paired?.description ?? ""
        let before = statuses.current.info
        let record = try? await history.start(
            device: device, from: UpdatePlan.versions(before), to: wanted(images, plan, before), at: unixMS())
        let glasses = await sessions.activeSession
        let runner = UpdateRunner(
            bootloader: glasses as? any BootloaderEntry, monocle: glasses as? MonocleSession<ContinuousClock>, supervisor: supervisor, statuses: statuses, settings: settings, job: job, logger: logger
        ) { [history, logger] in
            do { try await history.dropPackage() } catch { logger.warning("cannot drop the kept firmware package: \(error)") }
        }
        var after = before
        let result: UpdatePhase
        let message: String
        do {
            try job.enter(.checking)
            if plan.firmware, let firmware = images.firmware, let record {
                // Before the glasses enter their bootloader: a restarted glassd resumes from it.
                try await history.keepPackage(id: record, bytes: firmware.file, version: firmware.version)
                if resuming { try await history.dropPackage(olderThan: record) }
            }
            if resuming, let firmware = images.firmware {
                guard let info = try await runner.resumeFirmware(firmware) else {
                    try await history.dropPackage()
                    throw UpdateFailure("The glasses were not in their bootloader: nothing to resume.")
                }
                after = info
                try job.enter(.uploadingScripts)
                result = .done
                message = "Resumed and updated: \(UpdatePlan.versions(after))."
            } else if plan.isEmpty {
                result = .done
                message = "Already current (\(UpdatePlan.versions(before)))."
            } else {
                after = try await runner.run(images, plan: plan)
                try job.enter(.uploadingScripts)
                result = .done
                message = "Updated: \(UpdatePlan.versions(after))."
            }
        } catch let error where error is CancellationError || error as? FPGAUpdateError == .cancelled || Task.isCancelled {
            result = .cancelled
            message = "Cancelled; the glasses keep the images they had."
        } catch {
            result = .failed
            message = sentence("\(error)")
        }
        if let record {
            try? await history.finish(
                id: record, result: result == .done ? .done : result == .cancelled ? .cancelled : .failed,
                to: UpdatePlan.versions(after ?? statuses.current.info), error: result == .done ? "" : message, at: unixMS())
        }
        logger.log(
            level: result == .done ? .info : .notice, "update \(result.rawValue)", metadata: ["job": "\(job.path)", "message": "\(message)"])
        let unexport = jobs.withLock { j -> UpdateJob? in
            j.running = nil
            j.ended.append(job)
            return j.ended.count > Self.endedJobsKept ? j.ended.removeFirst() : nil
        }
        if let unexport { await connection.unexport(interface: GlassdBus.jobInterface, at: unexport.path, announce: true) }
        let ended = await requiredMark(statuses.current.info)
        mark.set(ended)
        // Bounded: the mark is shown in order with the link's other changes.
        if (try? await markShown.wait(timeout: .seconds(5), clock: ContinuousClock()) { $0 == ended }) == nil {
            logger.notice("the device's State did not show the update's end in time")
        }
        job.finish(result, message: message)
    }

    /// The versions the plan brings, as far as they are known before.
    private func wanted(_ images: UpdateImages, _ plan: UpdatePlan, _ before: DeviceInfo?) -> String {
        var info = before ?? DeviceInfo(firmwareVersion: "", fpgaVersion: "", battery: nil, runningScripts: nil, storedScripts: nil)
        if plan.firmware { info.firmwareVersion = images.firmware?.version ?? "new" }
        if plan.fpga { info.fpgaVersion = images.fpga?.version ?? "new" }
        return UpdatePlan.versions(info)
    }

    // MARK: History

    /// UpdateHistory(limit): also without Bluetooth (what was recorded before).
    static func historyMethod(_ history: SQLiteUpdateHistory, logger: Logger) -> InterfaceSpec.Method {
        GlassdBus.Manager1.UpdateHistory.method { call in
            try await updateHistory(call, history, logger)
        }
    }

    private static func updateHistory(_ call: MethodCall, _ history: SQLiteUpdateHistory, _ logger: Logger) async throws -> [DBusValue] {
        let limit = Int(min(call.arguments.first?.uint32 ?? 0, 10_000))
        let records: [UpdateRecord]
        do {
            records = try await history.recent(limit: limit)
        } catch {
            logger.error("update history failed: \(error)")
            throw BusError.failed("The update history could not be read.")
        }
        let rows = records.map { r in
            DBusValue.structure([
                .uint64(UInt64(max(0, r.startedAt))), .string(r.device), .string(r.fromVersions), .string(r.toVersions),
                .string(r.result == nil ? "interrupted" : r.error), .bool(r.result == .done),
            ])
        }
        return [.array(element: "(tssssb)", rows)]
    }

    // MARK: Policy

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
                let images = try UpdateImages.fromManifest(in: policy.firmwareDirectory)
                guard images.firmware != nil else { continue }
                if let mismatch = await mismatch(images) {
                    logger.notice("automatic recovery from the bootloader not started: \(mismatch)")
                    continue
                }
                logger.notice("automatic update: the glasses are in their bootloader; sending the pinned firmware")
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
                let images = try UpdateImages.fromManifest(in: policy.firmwareDirectory)
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
            _ = try await resume(try Self.images(pending))
        } catch {
            logger.warning("cannot resume the interrupted update: \(error)")
        }
    }

    /// The kept package of an update that may have left the glasses in their bootloader.
    private static func images(_ pending: (device: String, bytes: [UInt8], version: String?)) throws(UpdateRefusal) -> UpdateImages {
        let package = try UpdateImages.package(pending.bytes, pinned: nil)
        return UpdateImages(firmware: .init(file: pending.bytes, package: package, version: pending.version), fpga: nil)
    }

    private func requiredMark(_ info: DeviceInfo?) async -> UpdateMark {
        guard let info, let images = try? UpdateImages.fromManifest(in: policy.firmwareDirectory),
            await mismatch(images) == nil, let reason = UpdatePlan.outdated(images, device: info)
        else { return .none }
        return .required(reason)
    }

    /// Why `images` do not suit the paired glasses (their kind is the session that served their
    /// last link), or nil: a Frame has no FPGA, and pinned images name their kind.
    private func mismatch(_ images: UpdateImages) async -> String? {
        let monocle = await sessions.activeSession is MonocleSession<ContinuousClock>
        let glasses = monocle ? "a Monocle" : "a Frame"
        if images.fpga != nil && !monocle { return "An FPGA image is for a Monocle; the paired glasses are \(glasses)." }
        if let kind = images.kind, (kind == .monocle) != monocle {
            return "The pinned images are for \(kind == .monocle ? "a Monocle" : "a Frame"); the paired glasses are \(glasses)."
        }
        return nil
    }

    private func unixMS() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}

/// Update's a{sv} (its keys are dbus/org.glassd.Manager1.xml's): `firmware`, `fpga` (s path or
/// h descriptor), `force` (b).
struct UpdateOptions: Sendable {
    var firmware: UpdateImages.Source?
    var fpga: UpdateImages.Source?
    var force = false

    init(_ value: DBusValue?) throws(BusError) {
        guard let value, case .dict(_, _, let entries) = value else { throw BusError.invalidArgs("Update takes a{sv} options.") }
        // The descriptors are this call's (DBusKit passed copies): read now, all closed in any case.
        let descriptors = entries.compactMap { entry -> Int32? in
            switch entry.value {
            case .unixFD(let fd), .variant(.unixFD(let fd)): fd
            default: nil
            }
        }
        defer { for fd in descriptors { close(fd) } }
        let options: GlassdBus.Manager1.UpdateOptions
        do throws(ContractError) {
            options = try GlassdBus.Manager1.UpdateOptions(value)
        } catch {
            let (key, type) =
                switch error {
                case .unknownKey(let key, let type, _): (key, type)
                case .wrongType(let key, _, let type): (key, type)
                case .missingArgument(let key): (key, "?")
                }
            throw BusError.invalidArgs(
                "Unknown update option \(key) of type \(type): use firmware or fpga (s or h) and force (b).")
        }
        firmware = try Self.source(options.firmware, "firmware")
        fpga = try Self.source(options.fpga, "fpga")
        force = options.force ?? false
    }

    /// An image option: a path, or a descriptor read now.
    private static func source(_ value: DBusValue?, _ key: String) throws(BusError) -> UpdateImages.Source? {
        switch value {
        case .string(let path)?: return .path(path)
        case .unixFD(let fd)?:
            do {
                return .contents(try UpdateImages.read(fd, key))
            } catch {
                throw error.busError
            }
        default: return nil
        }
    }
}
