// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Glasses
import LinkKit
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
    var book: SessionBook<C>
    private var dataLink: DataLink<C>?
    private var maxPayload = 0
    private let displayGate = AsyncGate()
    /// The current link's channels, from its start until it ends (lent out by `maintain`).
    var channels: (serial: any ByteChannel, data: any ByteChannel)?
    /// While the link is lent out (or the data channel, to stream the scripts): where the readers
    /// put what the glasses send.
    var diversion: (serial: PacketInbox?, data: PacketInbox?)?
    /// Each `rdy:` of the scripts.
    let readyPulse = Pulse()
    /// Drops the current link so the supervisor connects afresh (set by `run`).
    var restartLink: (@Sendable (String) async -> Void)?
    /// The scene frame coming in (sst:, idt:…, sen:).
    private var sceneFrame = PhotoAssembly()
    private let sink = Broadcast<SessionEvent>()

    public init(scripts: DeviceScripts, clock: C, settings: SessionSettings = SessionSettings(), logger: Logger) {
        self.scripts = scripts
        self.clock = clock
        self.settings = settings
        self.logger = logger
        book = SessionBook(sink: sink, clock: clock, logger: logger)
    }

    public nonisolated func subscribe() -> AsyncStream<SessionEvent> { sink.subscribe() }

    public var current: SessionStatus { book.status }

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
        dataLink = nil
        book.begin(generation)
    }

    private func end(_ generation: UInt64) {
        guard generation == book.generation else { return }
        sceneFrame.abandon()
        dataLink = nil
        channels = nil
        endDiversion()
        book.ended(generation)
    }

    /// One link, from handshake to the end of it.
    private func serve(_ link: any GlassesLink, generation: UInt64, restart: @Sendable (String) async -> Void) async {
        guard let serial = link.channel(MonocleChannel.serial), let data = link.channel(MonocleChannel.data) else {
            book.set(.error, reason: "The device is not a Monocle.", for: generation)
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
            guard !Task.isCancelled, generation == book.generation else { return }
            let reason = "\(error)"
            logger.notice("session failed: \(reason)")
            book.set(.error, reason: sentence(reason), for: generation)
            await restart(reason)
        }
    }

    private func bringUp(
        _ repl: RawRepl<C>, data: any ByteChannel, dataLink: DataLink<C>, maxPayload: Int, started: OneShotEvent,
        generation: UInt64
    ) async throws {
        book.set(.handshake, for: generation)
        try await repl.enter()
        book.set(.checking, for: generation)
        var info = try DeviceCommands.parseCheck(try await repl.execute(DeviceCommands.check(scripts)))
        book.setInfo(info, for: generation)
        let upload = info.storedScripts != scripts.version
        if upload {
            book.set(.uploading, for: generation)
            logger.info("uploading the device scripts", metadata: ["version": "\(scripts.version)"])
            try await uploadScripts(repl, data: data)
            let after = try DeviceCommands.parseCheck(try await repl.execute(DeviceCommands.check(scripts)))
            guard after.storedScripts == scripts.version else {
                throw ReplError.unexpectedReply("the scripts on the device do not match after the upload")
            }
            info.storedScripts = after.storedScripts
        }
        book.set(.starting, for: generation)
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
        book.setInfo(info, for: generation)
        book.set(.ready, reason: "", for: generation)
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
            if let unsaid = book.admit("device output") {
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
                book.logDropped("lost", "data channel messages were lost (the reader fell behind)")
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
                book.logDropped(error.kind, "malformed data message dropped: \(error.kind) (\(frame.count) bytes)")
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
            if book.status.state == .busy { book.set(.ready, for: generation) }
        case .battery(let level):
            if generation == book.generation { book.setBattery(level) }
        case .sceneStart where book.sceneFrameAsked == nil:
            book.logDropped("sst:", "a scene frame the glasses were not asked for dropped")
        case .sceneStart:
            if book.status.state == .ready { book.set(.busy, for: generation) }
            sceneFrame.start()
        case .audioStart(let format), .imageStart(let format):
            sceneFrame.abandon()  // a question takes over
            book.questionStarted()
            book.publish(.questionStart(photo: message == .imageStart(format), audio: format))
        case .imageData(let bytes) where sceneFrame.collecting:
            sceneFrame.append(bytes)
        case .sceneEnd:
            // A scene frame is not a question: the glasses are free again, unless answering.
            guard book.sceneFrameAsked != nil else { return book.logDropped("sen:", "the end of a scene frame not asked for dropped") }
            book.sceneFrameEnded()
            if let frame = sceneFrame.finish() { book.publish(.sceneFrame(frame)) }
        case .cancelled:
            book.cancelled()
        case .pong:
            break  // kept for compatibility; nothing waits on it
        case .audioData(let bytes):
            book.publish(.audio(bytes))
        case .audioEnd:
            book.publish(.audioEnd)
        case .imageData(let bytes):
            book.publish(.photoData(bytes))
        case .imageEnd:
            book.publish(.photoEnd)
        case .listening(let bytes):
            book.publish(.listening(bytes, format: .monocle))
        case .glance:
            book.publish(.glance)
        case .ping, .response, .error, .imageAck, .display, .stopRecording, .answerEnd, .capture, .alert, .pageText, .pagesShow,
            .listen, .wake:
            book.logDropped(message.command, "unexpected message from the glasses dropped: \(message.command)")
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
        book.answerFinished(stream)
    }

    /// Scene mode: the photo comes as sst:, idt:..., sen:.
    public func requestSceneFrame() async throws {
        // A frame the glasses never ended (sen:) is given up.
        if try book.readyForSceneFrame() { sceneFrame.abandon() }
        let write = try writer()
        // Before the write: its sst: may be handled while the write is still awaited.
        book.sceneFrameAsked = clock.now
        do {
            try await write(.capture)
        } catch {
            book.sceneFrameAsked = nil
            throw error
        }
    }

    public func showAlert(_ text: String?) async throws {
        try await writer()(.alert(String(DisplayText.ascii(text ?? "").prefix(maxPayload))))
    }

    public func stopRecording() async throws {
        try await writer()(.stopRecording)
    }

    public func setListening(_ on: Bool) async throws {
        try await writer()(.listen(on))
    }

    /// `wak:`: the scripts start recording (ast:, dat:…) as on a tap, if still idle when it comes.
    public func startQuestion(heard: String) async throws {
        let write = try writer()
        guard book.status.state == .ready, book.answer == nil else { throw SessionError.busy }
        try await write(.wake(String(DisplayText.ascii(heard).prefix(maxPayload))))
    }

    /// The pages in `pga:` messages (form feeds between them), then `pgs:`: the scripts show the
    /// first and turn the page on each tap, with no round trip.
    public func pageLayout() -> AnswerLayout { .monocle }

    public func showPages(_ pages: [String]) async throws {
        try book.checkReady()
        guard let dataLink else { throw SessionError.notConnected("The glasses are not ready (starting).") }
        try await displayGate.withLock {
            for piece in AnswerPages.wire(pages, limit: maxPayload) { try await dataLink.send(.pageText(piece)) }
            try await dataLink.send(.pagesShow)
        }
    }

    public func answerStream(claim: Bool) throws -> AnswerStream {
        let stream = AnswerStream(
            maxPayload: maxPayload, prepare: DisplayText.ascii,
            send: AnswerStream.pieces(heading: DataMessage.display, text: DataMessage.response, error: DataMessage.error, end: .answerEnd, try writer()))
        try book.begin(answer: stream, claim: claim)
        return stream
    }

    /// Writes one message on the current link, in turn with other writers; it fails once that
    /// link is gone (a later link is not written to).
    private func writer() throws -> @Sendable (DataMessage) async throws -> Void {
        try book.checkReady()
        guard let dataLink else { throw SessionError.notConnected("The glasses are not ready (starting).") }
        let gate = displayGate
        return { message in try await gate.withLock { try await dataLink.send(message) } }
    }

    private func send(first: (String) -> DataMessage, _ text: String) async throws {
        try book.checkReady()
        guard let dataLink else { throw SessionError.notConnected("The glasses are not ready (starting).") }
        let chunks = DisplayText.chunks(DisplayText.ascii(text), limit: maxPayload)
        // One message after another, none from another writer in between.
        try await displayGate.withLock {
            try await dataLink.send(first(chunks.first ?? ""))
            for chunk in chunks.dropFirst() { try await dataLink.send(.response(chunk)) }
        }
    }
}
