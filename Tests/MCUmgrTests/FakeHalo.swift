// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Glasses
import LinkKit
import MCUmgr
import Synchronization

/// A Halo in memory for the updater: MCUboot's two slots behind an SMP server (upload with
/// resume by `sha`, state read and write, reset), a session status that a reset or a drop moves
/// to a new link, and the session's update channel (a new one per link).
final class FakeHalo: UpdateChannelAccess {
    struct Image: Equatable {
        var version: String
        var hash: [UInt8]
        var confirmed = true
    }

    struct State {
        var running: Image
        /// Slot 1 once an upload is complete (or given).
        var held: Image?
        var pending = false
        /// The upload under way: its sha, length and bytes received.
        var uploadSHA: [UInt8]?
        var uploadLength = 0
        var received: [UInt8] = []
        /// Upload requests: (offset, the offset answered).
        var uploads: [(offset: Int, answered: Int)] = []
        var dropAt: Int?
        /// From this many bytes held, upload requests go unanswered (the link stays up).
        var hangAt: Int?
        var crashNextBoot = false
        var silentNextImage = false
        /// The next reset is lost with the link (it drops first): no reboot, a new link.
        var loseNextReset = false
        var selfConfirm = false
        var resets = 0
        /// The session status when each confirm (`confirm: true`) arrived.
        var confirmedWhile: [SessionStatus] = []
        var channel: FakeSMPDevice?
    }

    let state: Mutex<State>
    let statuses: Watched<SessionStatus>
    /// Set when an upload request first goes unanswered (`hangAt`).
    let hung = Watched(false)
    /// The image the update brings (its slot 1 hash once the upload completes).
    let incoming: MCUbootImage

    init(running: Image, incoming: MCUbootImage, configure: (inout State) -> Void = { _ in }) {
        var initial = State(running: running)
        configure(&initial)
        state = Mutex(initial)
        self.incoming = incoming
        statuses = Watched(SessionStatus(state: .ready, info: Self.info(running.version), generation: 1))
        state.withLock { $0.channel = makeChannel() }
    }

    static func info(_ version: String) -> DeviceInfo {
        DeviceInfo(versions: [ComponentName.firmware: version], battery: 90, runningScripts: "app", storedScripts: "app")
    }

    func updateChannel() async -> (any ByteChannel)? { state.withLock { $0.channel } }

    var snapshot: State { state.withLock { $0 } }

    private func makeChannel() -> FakeSMPDevice {
        FakeSMPDevice { [weak self] frame in self?.answer(frame) ?? [] }
    }

    private func answer(_ frame: SMPFrame) -> [[UInt8]] {
        let (group, command, write) = (frame.header.group, frame.header.command, frame.header.operation == .write)
        switch (group, command) {
        case (SMPGroup.os, 6):
            return FakeSMPDevice.reply(to: frame, .map(["buf_size": .int(256), "buf_count": .int(4)]))
        case (SMPGroup.os, 5):
            let lost: FakeSMPDevice? = state.withLock { s in
                guard s.loseNextReset else { return nil }
                s.loseNextReset = false
                return s.channel
            }
            if let lost {
                lost.incoming.finish()
                newLink(state: .ready, version: snapshot.running.version)
                return []
            }
            let reply = FakeSMPDevice.reply(to: frame, .map([]))
            reboot()
            return reply
        case (SMPGroup.image, 0):
            if write {
                let confirm = frame.payload["confirm"]?.boolValue ?? false
                let status = statuses.current
                state.withLock { s in
                    if confirm {
                        s.confirmedWhile.append(status)
                        s.running.confirmed = true
                    } else if let hash = frame.payload["hash"]?.bytesValue, s.held?.hash == hash {
                        s.pending = true
                    }
                }
            }
            return FakeSMPDevice.reply(to: frame, slots())
        case (SMPGroup.image, 1):
            return upload(frame)
        default:
            return FakeSMPDevice.reply(to: frame, .map(["rc": .int(8)]))
        }
    }

    private func slots() -> CBOR {
        state.withLock { s in
            var slots = [ImageSlot(slot: 0, version: s.running.version, hash: s.running.hash, confirmed: s.running.confirmed, active: true)]
            if let held = s.held { slots.append(ImageSlot(slot: 1, version: held.version, hash: held.hash, pending: s.pending)) }
            return ImageState(slots: slots).payload
        }
    }

    private func upload(_ frame: SMPFrame) -> [[UInt8]] {
        let offset = frame.payload["off"]?.intValue ?? -1
        let data = frame.payload["data"]?.bytesValue ?? []
        let (answered, drop): (Int, FakeSMPDevice?) = state.withLock { s in
            if offset == 0 {
                let sha = frame.payload["sha"]?.bytesValue
                if sha == nil || sha != s.uploadSHA || s.received.isEmpty {
                    // A new upload: from zero.
                    s.uploadSHA = sha
                    s.uploadLength = frame.payload["len"]?.intValue ?? 0
                    s.received = data
                    s.held = nil
                    s.pending = false
                }
            } else if offset == s.received.count {
                s.received += data
            }
            let answered = s.received.count
            s.uploads.append((offset, answered))
            if answered == s.uploadLength, s.uploadLength > 0 {
                s.held = Image(version: incoming.version.normalized, hash: incoming.tlvHash, confirmed: false)
            }
            if let at = s.dropAt, answered >= at {
                s.dropAt = nil
                return (answered, s.channel)
            }
            return (answered, nil)
        }
        if let at = snapshot.hangAt, answered >= at {
            hung.set(true)
            return []
        }
        if let drop {
            // The link goes before the answer: a new link comes up.
            drop.incoming.finish()
            newLink(state: .ready, version: snapshot.running.version)
            return []
        }
        return FakeSMPDevice.reply(to: frame, .map(["off": .int(answered)]))
    }

    /// MCUboot at a reset: a pending image is swapped in for a test (a crash reverts it at once);
    /// an unconfirmed image that runs is reverted.
    private func reboot() {
        let (version, silent): (String, Bool) = state.withLock { s in
            s.resets += 1
            var silent = false
            if s.pending, var next = s.held {
                s.pending = false
                if s.crashNextBoot {
                    s.crashNextBoot = false
                } else {
                    next.confirmed = s.selfConfirm
                    s.held = s.running
                    s.running = next
                    silent = s.silentNextImage
                    s.silentNextImage = false
                }
            } else if !s.running.confirmed, let old = s.held {
                s.held = s.running
                s.running = old
            }
            return (s.running.version, silent)
        }
        newLink(state: silent ? .starting : .ready, version: version)
    }

    private func newLink(state next: SessionState, version: String) {
        let channel = makeChannel()
        state.withLock { $0.channel = channel }
        let generation = statuses.current.generation + 1
        statuses.set(SessionStatus(state: next, info: Self.info(version), generation: generation))
    }
}

/// An update's phases as the job saw them.
final class RecordedJob: UpdateProgress {
    let phases = Mutex<[UpdatePhase]>([])
    func enter(_ phase: UpdatePhase) throws { phases.withLock { $0.append(phase) } }
    func progress(_ phase: UpdatePhase, _ fraction: Double) {}
    var entered: [String] { phases.withLock { $0.map(\.rawValue) } }
}

/// A Halo has no bootloader to reach.
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
