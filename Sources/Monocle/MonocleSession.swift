// SPDX-License-Identifier: GPL-2.0-or-later
import GlassdCore
import Glasses
import Logging

/// Timing of a session.
public struct SessionSettings: Sendable {
    public var repl = ReplSettings()
    /// One upload command (a chunk written to flash).
    public var uploadCommandTimeout: Duration = .seconds(10)
    /// From starting the scripts until they say `rdy:`.
    public var startTimeout: Duration = .seconds(20)
    /// Scripts of this many bytes or more go on the data channel (`ScriptStream`), fewer over the
    /// REPL alone (`ScriptUpload`), which is also the fallback.
    public var streamScriptsFrom = 4096
    public var scriptStream = ScriptStream.window

    public init() {}
}

/// Brings a connected Monocle to `ready` by itself, on every link that comes up: raw REPL,
/// versions and battery, the project's scripts uploaded only when they differ, started (resumed
/// without a reboot when they already run), then talks to them over the data channel. Pure: a
/// link's byte channels and a clock are all it needs.
public actor MonocleSession<C: Clock>: GlassesSession where C.Duration == Duration {
    let scripts: DeviceScripts
    let clock: C
    public let settings: SessionSettings
    let logger: Logger
    private var status = SessionStatus(state: .disconnected)
    private var generation: UInt64 = 0
    private var dataLink: DataLink<C>?
    private var maxPayload = 0
    private let displayGate = AsyncGate()
    /// The answer on its way to the glasses: one at a time, and a cancel tap stops it.
    private var answer: AnswerStream?
    /// The current link's channels, from its start until it ends (lent out by `maintain`).
    var channels: (serial: any ByteChannel, data: any ByteChannel)?
    /// While the link is lent out (or the data channel, to stream the scripts): where the readers
    /// put what the glasses send.
    var diversion: (serial: PacketInbox?, data: PacketInbox?)?
    /// Each `rdy:` of the scripts.
    let readyPulse = Pulse()
    /// Drops the current link so the supervisor connects afresh (set by `run`).
    var restartLink: (@Sendable (String) async -> Void)?
    /// What the glasses send that is dropped is logged once per kind, then rarely.
    private var dropped: LogThrottle<C>
    /// When the scene frame on its way was asked for (cap:), until it ends (sen:).
    private var sceneFrameAsked: C.Instant?
    /// The scene frame coming in (sst:, idt:…, sen:).
    private var sceneFrame = PhotoAssembly()
    /// A scene frame not ended this long after it was asked for is given up.
    public static var sceneFrameLimit: Duration { .seconds(10) }
    private let sink = Broadcast<SessionEvent>()

    public init(scripts: DeviceScripts, clock: C, settings: SessionSettings = SessionSettings(), logger: Logger) {
        self.scripts = scripts
        self.clock = clock
        self.settings = settings
        self.logger = logger
        dropped = LogThrottle(clock: clock)
    }

    public nonisolated func subscribe() -> AsyncStream<SessionEvent> { sink.subscribe() }

    /// Logs a dropped input of `kind` unless one of its kind was logged lately.
    private func logDropped(_ kind: String, _ detail: @autoclosure () -> String) {
        guard let unsaid = dropped.admit(kind) else { return }
        logger.notice("\(detail())", metadata: unsaid > 0 ? ["not_logged_since": "\(unsaid)"] : [:])
    }

    public var current: SessionStatus { status }

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

    // MARK: Links

    /// Serves each link that comes up until it goes down; `restart` drops the link after the
    /// session gave up, so the supervisor tries again on its backoff.
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
        dataLink = nil
        status.generation = generation
        status.state = .connecting  // until the handshake starts
        sink.publish(.status(status))
    }

    private func end(_ generation: UInt64) {
        guard generation == self.generation else { return }
        sceneFrameAsked = nil
        sceneFrame.abandon()
        dataLink = nil
        channels = nil
        endDiversion()
        if status.state != .error { set(.disconnected, for: generation) }
    }

    /// One link, from handshake to the end of it.
    private func serve(_ link: any GlassesLink, generation: UInt64, restart: @Sendable (String) async -> Void) async {
        guard let serial = link.channel(MonocleChannel.serial), let data = link.channel(MonocleChannel.data) else {
            set(.error, reason: "The device is not a Monocle.", for: generation)
            return
        }
        let repl = RawRepl(channel: serial, clock: clock, settings: settings.repl)
        let dataLink = DataLink(channel: data, clock: clock)
        channels = (serial, data)
        let started = OneShotEvent()
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                // The data channel is read from the start, so the scripts' rdy: is never missed.
                group.addTask {
                    await self.readData(data, link: dataLink, started: started, generation: generation)
                    throw ReplError.closed
                }
                group.addTask {
                    try await self.bringUp(repl, data: data, dataLink: dataLink,
                        maxPayload: data.maxPacketSize - DataMessage.prefixLength, started: started, generation: generation)
                    try await self.watchSerial(serial)
                }
                try await group.next()
                group.cancelAll()
            }
        } catch is CancellationError {
            return
        } catch ReplError.closed {
            return  // the link went: the supervisor says so and reconnects
        } catch {
            guard !Task.isCancelled, generation == self.generation else { return }
            let reason = "\(error)"
            logger.notice("session failed: \(reason)")
            set(.error, reason: sentence(reason), for: generation)
            await restart(reason)
        }
    }

    private func bringUp(
        _ repl: RawRepl<C>, data: any ByteChannel, dataLink: DataLink<C>, maxPayload: Int, started: OneShotEvent,
        generation: UInt64
    ) async throws {
        set(.handshake, for: generation)
        try await repl.enter()
        set(.checking, for: generation)
        var info = try DeviceCommands.parseCheck(try await repl.execute(DeviceCommands.check(scripts)))
        setInfo(info, for: generation)
        let upload = info.storedScripts != scripts.version
        if upload {
            set(.uploading, for: generation)
            logger.info("uploading the device scripts", metadata: ["version": "\(scripts.version)"])
            try await uploadScripts(repl, data: data)
            let after = try DeviceCommands.parseCheck(try await repl.execute(DeviceCommands.check(scripts)))
            guard after.storedScripts == scripts.version else {
                throw ReplError.unexpectedReply("the scripts on the device do not match after the upload")
            }
            info.storedScripts = after.storedScripts
        }
        set(.starting, for: generation)
        if upload || info.runningScripts != scripts.version {
            try await repl.softReboot()
        } else {
            try await repl.start(DeviceCommands.resume)
        }
        guard try await happens(within: settings.startTimeout, on: clock, { await started.wait() }) else { throw ReplError.timeout("starting the scripts (no rdy:)") }
        let roundTrips = await repl.roundTrips
        logger.info("scripts running", metadata: ["repl_round_trips": "\(roundTrips)", "uploaded": "\(upload)"])
        info.runningScripts = scripts.version
        self.dataLink = dataLink
        self.maxPayload = maxPayload
        setInfo(info, for: generation)
        set(.ready, reason: "", for: generation)
    }

    /// Large scripts on the data channel (its reader diverted meanwhile), falling back to the REPL
    /// method if that fails with the link still up; small ones over the REPL.
    private func uploadScripts(_ repl: RawRepl<C>, data: any ByteChannel) async throws {
        let size = scripts.files.reduce(0) { $0 + scripts.uploaded($1).count }
        if size >= settings.streamScriptsFrom {
            let lent = LentChannel(channel: data, incoming: PacketInbox())
            diversion = (serial: nil, data: lent.incoming)
            defer { endDiversion() }
            do {
                let frames = try await ScriptStream.upload(
                    scripts, repl: repl, data: lent, clock: clock, stream: settings.scriptStream,
                    commandTimeout: settings.uploadCommandTimeout)
                logger.debug("scripts streamed", metadata: ["bytes": "\(size)", "chunks": "\(frames)"])
                return
            } catch ReplError.closed {
                throw ReplError.closed
            } catch FPGAUpdateError.repl(.closed) {
                throw ReplError.closed
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                logger.notice("streaming the scripts failed, sending them over the REPL: \(error)")
                try await repl.enter()
            }
        }
        for command in ScriptUpload.commands(scripts, maxCommandBytes: repl.settings.maxCommandBytes) {
            try await repl.execute(command, timeout: settings.uploadCommandTimeout)
        }
    }

    /// While the scripts run, the REPL says nothing; its banner means they stopped (crashed).
    /// While the link is lent out, what comes goes to the borrower.
    private func watchSerial(_ serial: any ByteChannel) async throws {
        var buffer = ReplBuffer(limit: 4096)
        for await incoming in serial.incoming {
            guard case .packet(let bytes) = incoming else { continue }
            if let lent = diversion?.serial {
                lent.push(bytes)
                buffer.clear()
                continue
            }
            buffer.append(bytes)
            // A device that prints on and on (a broken script) would flood the log: rarely said.
            if let unsaid = dropped.admit("device output") {
                logger.debug("device output", metadata: ["text": "\(String(decoding: bytes, as: UTF8.self))", "not_logged_since": "\(unsaid)"])
            }
            if buffer.takeBanner() { throw ReplError.unexpectedReply("the scripts stopped") }
        }
        throw ReplError.closed
    }

    /// Handles what the scripts send, for the life of the link.
    private func readData(_ data: any ByteChannel, link: DataLink<C>, started: OneShotEvent, generation: UInt64) async {
        for await incoming in data.incoming {
            guard case .packet(let frame) = incoming else {
                logDropped("lost", "data channel messages were lost (the reader fell behind)")
                continue
            }
            if let lent = diversion?.data {
                lent.push(frame)
                continue
            }
            let message: DataMessage
            do {
                message = try DataMessage.decode(frame)
            } catch {
                logDropped(error.kind, "malformed data message dropped: \(error.kind) (\(frame.count) bytes)")
                continue
            }
            await handle(message, link: link, started: started, generation: generation)
        }
    }

    private func handle(_ message: DataMessage, link: DataLink<C>, started: OneShotEvent, generation: UInt64) async {
        switch message {
        case .ack(let count):
            await link.acknowledge(count)
        case .ready:
            await link.reset()
            started.fire()
            readyPulse.pulse()
            if status.state == .busy { set(.ready, for: generation) }
        case .battery(let level):
            if var info = status.info, generation == self.generation {
                info.battery = level
                setInfo(info, for: generation)
            }
        case .sceneStart where sceneFrameAsked == nil:
            logDropped("sst:", "a scene frame the glasses were not asked for dropped")
        case .sceneStart:
            if status.state == .ready { set(.busy, for: generation) }
            sceneFrame.start()
        case .audioStart, .imageStart:
            sceneFrameAsked = nil  // a question takes over
            sceneFrame.abandon()
            if status.state == .ready { set(.busy, for: generation) }
            sink.publish(.glasses(.questionStart(photo: message == .imageStart, audio: .monocle)))
        case .imageData(let bytes) where sceneFrame.collecting:
            sceneFrame.append(bytes)
        case .sceneEnd:
            // A scene frame is not a question: the glasses are free again, unless answering.
            guard sceneFrameAsked != nil else { return logDropped("sen:", "the end of a scene frame not asked for dropped") }
            sceneFrameAsked = nil
            if status.state == .busy && answer == nil { set(.ready, for: generation) }
            if let frame = sceneFrame.finish() { sink.publish(.glasses(.sceneFrame(frame))) }
        case .cancelled:
            answer?.cancel()
            answer = nil
            if status.state == .busy { set(.ready, for: generation) }
            sink.publish(.glasses(.cancelled))
        case .pong:
            break  // kept for compatibility; nothing waits on it
        case .audioData(let bytes):
            sink.publish(.glasses(.audio(bytes)))
        case .audioEnd:
            sink.publish(.glasses(.audioEnd))
        case .imageData(let bytes):
            sink.publish(.glasses(.photoData(bytes)))
        case .imageEnd:
            sink.publish(.glasses(.photoEnd))
        case .ping, .response, .error, .imageAck, .display, .stopRecording, .answerEnd, .capture, .alert:
            logDropped(message.command, "unexpected message from the glasses dropped: \(message.command)")
        }
    }

    // MARK: Requests

    /// Shows `text` on the glasses (transliterated to the display's ASCII font).
    public func display(_ text: String) async throws {
        try await send(first: DataMessage.display, text)
    }

    /// Appends answer text (`error`: in red) to what the glasses show.
    public func show(_ text: String, error: Bool = false) async throws {
        try await send(first: error ? DataMessage.error : DataMessage.response, text)
    }

    public func answerFinished(_ stream: AnswerStream?) {
        if let stream {
            guard stream === answer else { return }
            answer = nil
        }
        if status.state == .busy { set(.ready, for: generation) }
    }

    /// Scene mode: the photo comes as sst:, idt:..., sen:.
    public func requestSceneFrame() async throws {
        if status.state == .busy, answer == nil, let asked = sceneFrameAsked, asked.duration(to: clock.now) > Self.sceneFrameLimit {
            // The glasses never ended the last frame (sen:): it is given up.
            logDropped("unfinished scene frame", "a scene frame the glasses never ended given up")
            sceneFrameAsked = nil
            sceneFrame.abandon()
            set(.ready, for: generation)
        }
        guard status.state != .busy else { throw SessionError.busy }
        let write = try writer()
        // Before the write: its sst: may be handled while the write is still awaited.
        sceneFrameAsked = clock.now
        do {
            try await write(.capture)
        } catch {
            sceneFrameAsked = nil
            throw error
        }
    }

    public func showAlert(_ text: String?) async throws {
        try await writer()(.alert(String(DisplayText.ascii(text ?? "").prefix(maxPayload))))
    }

    public func stopRecording() async throws {
        try await writer()(.stopRecording)
    }

    public func answerStream(claim: Bool) throws -> AnswerStream {
        let write = try writer()
        if claim {
            guard status.state == .ready else { throw SessionError.busy }
            set(.busy, for: generation)
        }
        answer?.cancel()
        let stream = AnswerStream(maxPayload: maxPayload, prepare: DisplayText.ascii) { piece in
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

    /// Writes one message on the current link, in turn with other writers; it fails once that
    /// link is gone (a later link is not written to).
    private func writer() throws -> @Sendable (DataMessage) async throws -> Void {
        guard let dataLink, status.state == .ready || status.state == .busy else {
            throw SessionError.notConnected("The glasses are not ready (\(status.state.rawValue)).")
        }
        let gate = displayGate
        return { message in try await gate.withLock { try await dataLink.send(message) } }
    }

    private func send(first: (String) -> DataMessage, _ text: String) async throws {
        guard let dataLink, status.state == .ready || status.state == .busy else {
            throw SessionError.notConnected("The glasses are not ready (\(status.state.rawValue)).")
        }
        let chunks = DisplayText.chunks(DisplayText.ascii(text), limit: maxPayload)
        // One message after another, none from another writer in between.
        try await displayGate.withLock {
            try await dataLink.send(first(chunks.first ?? ""))
            for chunk in chunks.dropFirst() { try await dataLink.send(.response(chunk)) }
        }
    }
}
