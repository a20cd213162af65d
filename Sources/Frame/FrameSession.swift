// SPDX-License-Identifier: GPL-2.0-or-later
import GlassdCore
import Glasses
import Logging

/// Timing of a Frame session.
public struct FrameSessionSettings: Sendable {
    public var repl = LuaReplSettings()
    /// One upload command (a chunk written to flash).
    public var uploadCommandTimeout: Duration = .seconds(10)
    /// From starting the app until it says it is ready.
    public var startTimeout: Duration = .seconds(20)
    /// The photos the app takes for scene mode.
    public var scenePhoto = PhotoSettings()

    public init() {}
}

/// Brings a connected Frame (or Halo) to `ready` by itself, on every link that comes up: the Lua
/// REPL in step, versions and battery read, glassd's app uploaded only when it differs, started
/// (resumed when the same version already runs), then talks to the app in `AppMessage`s. Pure:
/// a link's byte channel and a clock are all it needs.
public actor FrameSession<C: Clock>: GlassesSession, BootloaderEntry where C.Duration == Duration {
    let app: FrameApp
    let clock: C
    public let settings: FrameSessionSettings
    let logger: Logger
    private var status = SessionStatus(state: .disconnected)
    private var generation: UInt64 = 0
    /// Writes one app message on the current link, once the app runs.
    private var writer: (@Sendable (AppMessage) async throws -> Void)?
    /// The current link's REPL, once the app runs (an update breaks the app through it).
    private var repl: LuaRepl<C>?
    /// Drops the current link so the supervisor connects afresh (set by `run`).
    private var restartLink: (@Sendable (String) async -> Void)?
    private var mtu = FrameMTU(attPayload: 20)
    /// The answer on its way to the glasses: one at a time, and a cancel tap stops it.
    private var answer: AnswerStream?
    /// Each `ready` of the app.
    private let readyPulse = Pulse()
    private var readyVersion: String?
    /// A question's photo, held until its recording starts (its format is known then).
    private var questionPhoto: PhotoAssembly?
    private var sceneFrame = PhotoAssembly()
    /// When the scene frame on its way was asked for, until it ends.
    private var sceneFrameAsked: C.Instant?
    private var dropped: LogThrottle<C>
    private let sink = Broadcast<SessionEvent>()

    public init(app: FrameApp = .bundled, clock: C, settings: FrameSessionSettings = FrameSessionSettings(), logger: Logger) {
        self.app = app
        self.clock = clock
        self.settings = settings
        self.logger = logger
        dropped = LogThrottle(clock: clock)
    }

    public nonisolated func subscribe() -> AsyncStream<SessionEvent> { sink.subscribe() }

    public var current: SessionStatus { status }

    /// A scene frame not ended this long after it was asked for is given up.
    public static var sceneFrameLimit: Duration { .seconds(10) }

    // MARK: Status

    func set(_ state: SessionState, reason: String? = nil, for generation: UInt64) {
        guard generation == self.generation else { return }
        var next = status
        next.state = state
        if let reason { next.reason = reason }
        guard next != status else { return }
        status = next
        logger.info("session \(state.rawValue)", metadata: reason.map { ["reason": "\($0)"] } ?? [:])
        sink.publish(.status(status))
    }

    private func setInfo(_ info: DeviceInfo, for generation: UInt64) {
        guard generation == self.generation, status.info != info else { return }
        status.info = info
        sink.publish(.status(status))
    }

    private func logDropped(_ kind: String, _ detail: @autoclosure () -> String) {
        guard let unsaid = dropped.admit(kind) else { return }
        logger.notice("\(detail())", metadata: unsaid > 0 ? ["not_logged_since": "\(unsaid)"] : [:])
    }

    // MARK: Links

    public func run(links: AsyncStream<LinkEvent>, restart: @escaping @Sendable (String) async -> Void) async {
        restartLink = restart
        await serveLinks(links) { generation in
            begin(generation)
        } serve: { link, generation in
            await self.serve(link, generation: generation, restart: restart)
        } end: { generation in
            await self.end(generation)
        }
    }

    private func begin(_ generation: UInt64) {
        self.generation = generation
        writer = nil
        repl = nil
        status.generation = generation
        status.state = .connecting
        sink.publish(.status(status))
    }

    private func end(_ generation: UInt64) {
        guard generation == self.generation else { return }
        writer = nil
        repl = nil
        answer = nil
        questionPhoto = nil
        sceneFrame.abandon()
        sceneFrameAsked = nil
        if status.state != .error { set(.disconnected, for: generation) }
    }

    /// One link, from handshake to its end.
    private func serve(_ link: any GlassesLink, generation: UInt64, restart: @Sendable (String) async -> Void) async {
        guard let channel = link.channel(FrameChannel.lua) else {
            set(.error, reason: "The device is not a Frame.", for: generation)
            return
        }
        let (data, dataSink) = AsyncStream.makeStream(of: Incoming.self)
        let repl = LuaRepl(channel: channel, clock: clock, settings: settings.repl) { dataSink.yield($0) }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    await repl.run()
                    dataSink.finish()
                }
                group.addTask {
                    for await incoming in data { await self.received(incoming, generation: generation) }
                    throw LuaReplError.closed
                }
                group.addTask { try await self.bringUp(repl, channel: channel, generation: generation) }
                // Until the link ends (the reader throws closed) or the bring-up fails.
                for try await _ in group {}
            }
        } catch is CancellationError {
            return
        } catch LuaReplError.closed {
            return  // the link went: the supervisor says so and reconnects
        } catch LuaReplError.cancelled {
            return
        } catch {
            guard !Task.isCancelled, generation == self.generation else { return }
            let reason = "\(error)"
            logger.notice("session failed: \(reason)")
            set(.error, reason: sentence(reason), for: generation)
            await restart(reason)
        }
    }

    private func bringUp(_ repl: LuaRepl<C>, channel: any ByteChannel, generation: UInt64) async throws {
        set(.handshake, for: generation)
        try await repl.handshake()
        set(.checking, for: generation)
        var found = try FrameCommands.parseCheck(try await repl.execute(FrameCommands.check, replies: FrameCommands.checkReplies))
        setInfo(Self.info(found), for: generation)
        let upload = found.storedApp != app.version
        if upload {
            set(.uploading, for: generation)
            logger.info("uploading the Frame app", metadata: ["version": "\(app.version)"])
            for command in try FrameCommands.upload(app, maxLuaString: repl.mtu.maxLuaString) {
                try await repl.execute(command, timeout: settings.uploadCommandTimeout)
            }
            found = try FrameCommands.parseCheck(try await repl.execute(FrameCommands.check, replies: FrameCommands.checkReplies))
            guard found.storedApp == app.version else {
                throw LuaReplError.unexpectedReply("the app on the glasses does not match after the upload")
            }
        }
        set(.starting, for: generation)
        let ticket = readyPulse.ticket()
        readyVersion = nil
        try await repl.start(!upload && found.runningApp == app.version ? FrameCommands.resume : FrameCommands.load)
        guard try await happens(within: settings.startTimeout, on: clock, { await self.readyPulse.wait(after: ticket) }) else {
            throw LuaReplError.timeout("starting the app (no ready)")
        }
        guard readyVersion == app.version else {
            throw LuaReplError.unexpectedReply("the app says it is version \(readyVersion ?? "?"), not \(app.version)")
        }
        let roundTrips = await repl.roundTrips
        logger.info("app running", metadata: ["repl_round_trips": "\(roundTrips)", "uploaded": "\(upload)"])
        found.runningApp = app.version
        mtu = repl.mtu
        let gate = AsyncGate()
        writer = { message in try await gate.withLock { try await channel.write(message.encoded) } }
        self.repl = repl
        setInfo(Self.info(found), for: generation)
        set(.ready, reason: "", for: generation)
    }

    static func info(_ found: FrameDeviceInfo) -> DeviceInfo {
        DeviceInfo(
            firmwareVersion: found.firmwareVersion ?? "", fpgaVersion: "", battery: found.battery,
            runningScripts: found.runningApp, storedScripts: found.storedApp)
    }

    // MARK: What the app sends

    private func received(_ incoming: Incoming, generation: UInt64) {
        guard generation == self.generation else { return }
        guard case .packet(let bytes) = incoming else {
            return logDropped("lost", "messages from the Frame were lost (the reader fell behind)")
        }
        let message: AppMessage
        do {
            message = try AppMessage.decode(bytes)
        } catch {
            return logDropped(error.kind, "malformed app message dropped: \(error.kind) (\(bytes.count) bytes)")
        }
        handle(message, generation: generation)
    }

    private func handle(_ message: AppMessage, generation: UInt64) {
        switch message {
        case .ready(let version):
            readyVersion = version
            readyPulse.pulse()
            if status.state == .busy { set(.ready, for: generation) }
        case .battery(let level):
            if var info = status.info {
                info.battery = level
                setInfo(info, for: generation)
            }
        case .photoStart:
            startQuestion()
            var photo = PhotoAssembly()
            photo.start()
            questionPhoto = photo
        case .audioStart(let rate, let bits):
            startQuestion()
            let photo = questionPhoto?.finish()
            questionPhoto = nil
            sink.publish(.glasses(.questionStart(photo: photo != nil, audio: AudioFormat(sampleRate: rate, bits: bits))))
            if let photo {
                // Too large: an empty photo, which the product refuses as not a JPEG.
                sink.publish(.glasses(.photoData(photo ?? [])))
                sink.publish(.glasses(.photoEnd))
            }
        case .photoData(let bytes):
            if sceneFrame.collecting {
                sceneFrame.append(bytes)
            } else if questionPhoto != nil {
                questionPhoto?.append(bytes)
            } else {
                logDropped("photo data", "photo data the Frame sent outside a photo dropped")
            }
        case .photoEnd:
            break  // the recording follows; the photo goes with its start
        case .audioData(let bytes):
            sink.publish(.glasses(.audio(bytes)))
        case .audioEnd:
            sink.publish(.glasses(.audioEnd))
        case .sceneStart:
            guard sceneFrameAsked != nil else { return logDropped("scene start", "a scene frame the Frame was not asked for dropped") }
            if status.state == .ready { set(.busy, for: generation) }
            sceneFrame.start()
        case .sceneEnd:
            guard sceneFrameAsked != nil else { return logDropped("scene end", "the end of a scene frame not asked for dropped") }
            sceneFrameAsked = nil
            if status.state == .busy && answer == nil { set(.ready, for: generation) }
            if let frame = sceneFrame.finish() { sink.publish(.glasses(.sceneFrame(frame))) }
        case .cancelled:
            answer?.cancel()
            answer = nil
            if status.state == .busy { set(.ready, for: generation) }
            sink.publish(.glasses(.cancelled))
        case .tap:
            sink.publish(.glasses(.tap))
        case .display, .response, .error, .answerEnd, .alert, .stopRecording, .capture, .photoSettings:
            logDropped(message.name, "unexpected message from the Frame dropped: \(message.name)")
        }
    }

    /// A question takes over the glasses: a scene frame on its way is given up.
    private func startQuestion() {
        sceneFrameAsked = nil
        sceneFrame.abandon()
        if status.state == .ready { set(.busy, for: generation) }
    }

    // MARK: Requests

    /// Breaks the app and runs `frame.update()`: the Frame reboots into its bootloader ("Frame
    /// Update", Nordic Secure DFU at its address + 1), dropping the link.
    public func enterBootloader() async throws {
        guard let repl, status.state == .ready || status.state == .busy else {
            throw SessionError.notConnected("The glasses are not ready (\(status.state.rawValue)).")
        }
        guard status.state == .ready else { throw SessionError.busy }
        writer = nil
        set(.updating, for: generation)
        do {
            try await repl.start(FrameCommands.enterBootloader)
        } catch {
            // Still up: the app is stopped, so this link cannot serve; the next one starts afresh.
            set(.error, reason: "The glasses did not enter their bootloader: \(error).", for: generation)
            await restartLink?("the glasses did not enter their bootloader")
            throw error
        }
        logger.info("the glasses reset for an update")
    }

    private func write() throws -> @Sendable (AppMessage) async throws -> Void {
        guard let writer, status.state == .ready || status.state == .busy else {
            throw SessionError.notConnected("The glasses are not ready (\(status.state.rawValue)).")
        }
        return writer
    }

    public func display(_ text: String) async throws {
        let write = try write()
        let chunks = DisplayText.chunks(DisplayText.ascii(text), limit: mtu.maxMessagePayload)
        try await write(.display(chunks.first ?? ""))
        for chunk in chunks.dropFirst() { try await write(.response(chunk)) }
    }

    public func answerStream(claim: Bool) throws -> AnswerStream {
        let write = try write()
        if claim {
            guard status.state == .ready else { throw SessionError.busy }
            set(.busy, for: generation)
        }
        answer?.cancel()
        let stream = AnswerStream(maxPayload: mtu.maxMessagePayload, prepare: DisplayText.ascii) { piece in
            switch piece {
            case .heading(let text): try await write(.display(text))
            case .text(let text): try await write(.response(text))
            case .error(let text): try await write(.error(text))
            case .end: try await write(.answerEnd)
            }
        }
        answer = stream
        return stream
    }

    public func answerFinished(_ stream: AnswerStream?) {
        if let stream {
            guard stream === answer else { return }
            answer = nil
        }
        if status.state == .busy { set(.ready, for: generation) }
    }

    public func stopRecording() async throws {
        try await write()(.stopRecording)
    }

    public func requestSceneFrame() async throws {
        if status.state == .busy, answer == nil, let asked = sceneFrameAsked, asked.duration(to: clock.now) > Self.sceneFrameLimit {
            logDropped("unfinished scene frame", "a scene frame the Frame never ended given up")
            sceneFrameAsked = nil
            sceneFrame.abandon()
            set(.ready, for: generation)
        }
        guard status.state != .busy else { throw SessionError.busy }
        let write = try write()
        sceneFrameAsked = clock.now
        do {
            try await write(.capture(settings.scenePhoto))
        } catch {
            sceneFrameAsked = nil
            throw error
        }
    }

    public func showAlert(_ text: String?) async throws {
        try await write()(.alert(String(DisplayText.ascii(text ?? "").utf8.prefix(mtu.maxMessagePayload)) ?? ""))
    }
}
