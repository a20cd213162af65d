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
    /// Every kind glassd knows, the first the default (as the link supervisor has them).
    let kinds: [GlassesKind]
    /// Every component of every kind, for Update's options.
    let components: [String]
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
        kinds = supervisor.settings.kinds
        components = Self.components(kinds)
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
        do {
            let options = try await UpdatePaths.checked(
                try UpdateOptions(call.arguments.first, components: components), sender: call.sender,
                firmwareDirectory: policy.firmwareDirectory, connection: connection)
            guard !isBusy else { throw UpdateRefusal(.busy, "An update is already running.") }
            guard let paired = await supervisor.snapshot().paired else { throw UpdateRefusal(.notPaired, "No glasses are paired.") }
            let pending = try? await history.pendingPackage()
            let situation = UpdateAdmission.Situation(
                status: statuses.current, kind: await pairedKind(), kinds: kinds, pendingForThem: pending?.device == paired.description,
                bootloaderSighted: supervisor.bootloaderSighted.current, minBattery: policy.minBattery)
            if let pending, UpdateAdmission.resumesKept(situation) {
                return try await resume(try await images(pending)).path
            }
            let images = try UpdateImages.load(options.sources, directory: policy.firmwareDirectory, kind: situation.kind, kinds: kinds)
            switch try UpdateAdmission.decide(images, force: options.force, situation) {
            case .recover:
                logger.notice("the glasses are in their bootloader: sending the given image")
                return try await resume(images).path
            case .start(let plan):
                return try await start(images, plan: plan).path
            }
        } catch let refusal as UpdateRefusal {
            logger.notice("update refused: \(refusal.message)")
            throw refusal.busError
        }
    }

    /// A job that sends the image to glasses in their bootloader, from what it holds.
    func resume(_ images: UpdateImages) async throws -> UpdateJob {
        let recovering = await pairedKind().recoveringUpdater
        return try await start(images, plan: UpdatePlan(recovering.map { [$0.component] } ?? []), resuming: true)
    }

    /// The paired glasses' kind: the one whose session served their last link.
    func pairedKind() async -> GlassesKind {
        let profile = await sessions.activeProfile
        return kinds.first { $0.profile.name == profile } ?? kinds[0]
    }

    /// Every component of every kind, for Update's options.
    static func components(_ kinds: [GlassesKind]) -> [String] {
        var names: [String] = []
        for updater in kinds.flatMap(\.updaters) where !names.contains(updater.component) { names.append(updater.component) }
        return names
    }

    /// Puts a job on the bus and runs it; `resuming`: the firmware of an update glassd stopped in.
    func start(_ images: UpdateImages, plan: UpdatePlan, resuming: Bool = false) async throws -> UpdateJob {
        let bar = UpdateRunner.progressBar(images, plan, updaters: await pairedKind().updaters)
        let job = try jobs.withLock { j throws(UpdateRefusal) -> UpdateJob in
            guard j.running == nil else { throw UpdateRefusal(.busy, "An update is already running.") }
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
        logger.info("update started", metadata: ["job": "\(job.path)", "components": "\(plan.components.joined(separator: ","))"])
        return job
    }

    private func execute(_ job: UpdateJob, _ images: UpdateImages, _ plan: UpdatePlan, resuming: Bool) async {
        let device = await supervisor.snapshot().paired?.description ?? ""
        let before = statuses.current.info
        let kind = await pairedKind()
        let record = try? await history.start(
            device: device, from: UpdatePlan.versions(before, kind: kind), to: wanted(images, plan, before, kind), at: unixMS())
        let context = UpdateContext(
            session: await sessions.activeSession, link: supervisor, statuses: statuses, settings: settings, job: job, logger: logger
        ) { [history, logger] in
            do { try await history.dropPackage() } catch { logger.warning("cannot drop the kept firmware package: \(error)") }
        }
        let runner = UpdateRunner(updaters: kind.updaters, context: context)
        // The image a step that can leave the glasses in their bootloader sends: kept until they run again.
        let kept = kind.recoveringUpdater.flatMap { plan.contains($0.component) ? images[$0.component] : nil }
        var after = before
        let result: UpdatePhase
        let message: String
        do {
            try job.enter(.checking)
            if let kept, let record {
                // Before the glasses enter their bootloader: a restarted glassd resumes from it.
                try await history.keepPackage(id: record, bytes: kept.file, version: kept.version)
                if resuming { try await history.dropPackage(olderThan: record) }
            }
            if resuming, let kept {
                guard let info = try await runner.recover(kept) else {
                    try await history.dropPackage()
                    throw UpdateFailure("The glasses were not in their bootloader: nothing to resume.")
                }
                after = info
                try job.enter(.uploadingScripts)
                result = .done
                message = "Resumed and updated: \(UpdatePlan.versions(after, kind: kind))."
            } else if plan.isEmpty {
                result = .done
                message = "Already current (\(UpdatePlan.versions(before, kind: kind)))."
            } else {
                after = try await runner.run(images, plan: plan)
                try job.enter(.uploadingScripts)
                result = .done
                message = "Updated: \(UpdatePlan.versions(after, kind: kind))."
            }
        } catch let error where error is CancellationError || Task.isCancelled {
            result = .cancelled
            message = "Cancelled; the glasses keep the images they had."
        } catch {
            result = .failed
            message = sentence("\(error)")
        }
        if let record {
            try? await history.finish(
                id: record, result: result == .done ? .done : result == .cancelled ? .cancelled : .failed,
                to: UpdatePlan.versions(after ?? statuses.current.info, kind: kind), error: result == .done ? "" : message, at: unixMS())
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
    private func wanted(_ images: UpdateImages, _ plan: UpdatePlan, _ before: DeviceInfo?, _ kind: GlassesKind) -> String {
        var info = before ?? DeviceInfo(versions: [:], battery: nil, runningScripts: nil, storedScripts: nil)
        for image in images.ordered where plan.contains(image.component) { info.versions[image.component] = image.version ?? "new" }
        return UpdatePlan.versions(info, kind: kind)
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
            throw UpdateRefusal(.recordsUnreadable, "The update history could not be read.").busError
        }
        let rows = records.map { r in
            DBusValue.structure([
                .uint64(UInt64(max(0, r.startedAt))), .string(r.device), .string(r.fromVersions), .string(r.toVersions),
                .string(r.result == nil ? "interrupted" : r.error), .bool(r.result == .done),
            ])
        }
        return [.array(element: "(tssssb)", rows)]
    }

    func unixMS() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}
