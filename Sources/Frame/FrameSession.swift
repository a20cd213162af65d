// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Glasses
import LinkKit
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
public actor FrameSession<C: Clock>: GlassesSession, BootloaderEntry, UpdateChannelAccess where C.Duration == Duration {
    let model: FrameModel
    var app: FrameApp { model.app }
    let clock: C
    public let settings: FrameSessionSettings
    let logger: Logger
    private var book: SessionBook<C>
    private let sink = Broadcast<SessionEvent>()
    /// Writes one app message on the current link, once the app runs.
    private var writer: (@Sendable (AppMessage) async throws -> Void)?
    /// The current link's REPL, once the app runs (an update breaks the app through it).
    private var repl: LuaRepl<C>?
    /// Drops the current link so the supervisor connects afresh (set by `run`).
    private var restartLink: (@Sendable (String) async -> Void)?
    private var mtu = FrameMTU(attPayload: 20)
    /// Each `ready` of the app.
    private let readyPulse = Pulse()
    private var readyVersion: String?
    /// A question's photo, held until its recording starts (its format is known then).
    private var questionPhoto: PhotoAssembly?
    private var sceneFrame = PhotoAssembly()
    /// The current link's speaker channel, where the model has one and the glasses offer it.
    private var audio: (any ByteChannel)?
    /// The current link's update channel (`model.updateChannel`), lent to a firmware updater.
    private var lent: (any ByteChannel)?
    /// The app's word on the speaker of the answer being spoken.
    private var speakerLine: SpeakerLine?

    public init(
        model: FrameModel = .frame, clock: C, settings: FrameSessionSettings = FrameSessionSettings(), logger: Logger
    ) {
        self.model = model
        self.clock = clock
        self.settings = settings
        self.logger = logger
        book = SessionBook(sink: sink, clock: clock, logger: logger)
    }

    public nonisolated func subscribe() -> AsyncStream<SessionEvent> { sink.subscribe() }

    public var current: SessionStatus { book.status }

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
        writer = nil
        repl = nil
        audio = nil
        lent = nil
        speakerLine = nil
        book.begin(generation)
    }

    private func end(_ generation: UInt64) {
        guard book.ended(generation) else { return }
        writer = nil
        repl = nil
        audio = nil
        lent = nil
        speakerLine = nil
        questionPhoto = nil
        sceneFrame.abandon()
    }

    /// One link, from handshake to its end.
    private func serve(_ link: any GlassesLink, generation: UInt64, restart: @Sendable (String) async -> Void) async {
        guard let channel = link.channel(FrameChannel.lua) else {
            book.set(.error, reason: "The device is not a Frame.", for: generation)
            return
        }
        audio = model.speaker.flatMap { link.channel($0.channel) }
        lent = model.updateChannel.flatMap { link.channel($0) }
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
            guard !Task.isCancelled, generation == book.generation else { return }
            let reason = "\(error)"
            logger.notice("session failed: \(reason)")
            book.set(.error, reason: sentence(reason), for: generation)
            await restart(reason)
        }
    }

    private func bringUp(_ repl: LuaRepl<C>, channel: any ByteChannel, generation: UInt64) async throws {
        book.set(.handshake, for: generation)
        try await repl.handshake()
        book.set(.checking, for: generation)
        var found = try FrameCommands.parseCheck(try await repl.execute(FrameCommands.check, replies: FrameCommands.checkReplies))
        book.setInfo(Self.info(found), for: generation)
        let upload = found.storedApp != app.version
        if upload {
            book.set(.uploading, for: generation)
            logger.info("uploading the Frame app", metadata: ["version": "\(app.version)"])
            for command in try FrameCommands.upload(app, maxLuaString: repl.mtu.maxLuaString) {
                try await repl.execute(command, timeout: settings.uploadCommandTimeout)
            }
            found = try FrameCommands.parseCheck(try await repl.execute(FrameCommands.check, replies: FrameCommands.checkReplies))
            guard found.storedApp == app.version else {
                throw LuaReplError.unexpectedReply("the app on the glasses does not match after the upload")
            }
        }
        book.set(.starting, for: generation)
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
        book.setInfo(Self.info(found), for: generation)
        book.set(.ready, reason: "", for: generation)
    }

    static func info(_ found: FrameDeviceInfo) -> DeviceInfo {
        DeviceInfo(
            versions: [ComponentName.firmware: found.firmwareVersion ?? ""], battery: found.battery,
            runningScripts: found.runningApp, storedScripts: found.storedApp)
    }

    // MARK: What the app sends

    private func received(_ incoming: Incoming, generation: UInt64) {
        guard generation == book.generation else { return }
        guard case .packet(let bytes) = incoming else {
            return book.logDropped("lost", "messages from the Frame were lost (the reader fell behind)")
        }
        let message: AppMessage
        do {
            message = try AppMessage.decode(bytes)
        } catch {
            return book.logDropped(error.kind, "malformed app message dropped: \(error.kind) (\(bytes.count) bytes)")
        }
        handle(message, generation: generation)
    }

    private func handle(_ message: AppMessage, generation: UInt64) {
        switch message {
        case .ready(let version):
            readyVersion = version
            readyPulse.pulse()
            if book.status.state == .busy { book.set(.ready, for: generation) }
        case .battery(let level):
            book.setBattery(level)
        case .charging(let charging):
            book.setCharging(charging)
        case .speaking(let started, let overhearing):
            speakerLine?.update {
                $0.speaking = started
                $0.overhearing = overhearing
            }
        case .speakerStats(let stats):
            speakerLine?.update { $0.stats = stats }
        case .speechCut:
            speakerLine?.update { $0.cut = true }
        case .photoStart:
            questionBegins()
            var photo = PhotoAssembly()
            photo.start()
            questionPhoto = photo
        case .audioStart(let format):
            questionBegins()
            let photo = questionPhoto?.finish()
            questionPhoto = nil
            book.publish(.questionStart(photo: photo != nil, audio: format))
            if let photo {
                // Too large: an empty photo, which the product refuses as not a JPEG.
                book.publish(.photoData(photo ?? []))
                book.publish(.photoEnd)
            }
        case .photoData(let bytes):
            if sceneFrame.collecting {
                sceneFrame.append(bytes)
            } else if questionPhoto != nil {
                questionPhoto?.append(bytes)
            } else {
                book.logDropped("photo data", "photo data the Frame sent outside a photo dropped")
            }
        case .photoEnd:
            break  // the recording follows; the photo goes with its start
        case .audioData(let bytes):
            book.publish(.audio(bytes))
        case .audioEnd:
            book.publish(.audioEnd)
        case .sceneStart:
            guard book.sceneFrameAsked != nil else {
                return book.logDropped("scene start", "a scene frame the Frame was not asked for dropped")
            }
            if book.status.state == .ready { book.set(.busy, for: generation) }
            sceneFrame.start()
        case .sceneEnd:
            guard book.sceneFrameAsked != nil else {
                return book.logDropped("scene end", "the end of a scene frame not asked for dropped")
            }
            book.sceneFrameEnded()
            if let frame = sceneFrame.finish() { book.publish(.sceneFrame(frame)) }
        case .cancelled:
            book.cancelled()
        case .tap:
            book.publish(.tap)
        case .glance:
            book.publish(.glance)
        case .listening(let bytes):
            book.publish(.listening(bytes, format: AudioFormat(sampleRate: 8_000, bits: 8)))
        case .overheard(let bytes):
            guard let format = speakerLine?.now.overhearing else {
                return book.logDropped("overheard", "audio overheard while no answer was spoken dropped")
            }
            book.publish(.overheard(bytes, format: format))
        case .display, .response, .error, .answerEnd, .alert, .stopRecording, .capture, .photoSettings, .pageText, .pagesShow,
            .listen, .wake, .speakStart, .speakStop, .bargeIn:
            book.logDropped(message.name, "unexpected message from the Frame dropped: \(message.name)")
        }
    }

    /// A question takes over the glasses: a scene frame on its way is given up.
    private func questionBegins() {
        sceneFrame.abandon()
        book.questionStarted()
    }

    // MARK: Requests

    /// Lent from the link's start, before the app answers: an updater can still reach the
    /// glasses' update service when a new image's app is silent.
    public func updateChannel() -> (any ByteChannel)? { lent }

    /// Breaks the app and runs `frame.update()`: the Frame reboots into its bootloader ("Frame
    /// Update", Nordic Secure DFU at its address + 1), dropping the link.
    public func enterBootloader() async throws {
        try book.checkReady()
        guard let repl, book.status.state == .ready else { throw SessionError.busy }
        let generation = book.generation
        writer = nil
        book.set(.updating, for: generation)
        do {
            try await repl.start(FrameCommands.enterBootloader)
        } catch {
            // Still up: the app is stopped, so this link cannot serve; the next one starts afresh.
            book.set(.error, reason: "The glasses did not enter their bootloader: \(error).", for: generation)
            await restartLink?("the glasses did not enter their bootloader")
            throw error
        }
        logger.info("the glasses reset for an update")
    }

    private func write() throws -> @Sendable (AppMessage) async throws -> Void {
        try book.checkReady()
        guard let writer else { throw SessionError.notConnected("The glasses are not ready (starting).") }
        return writer
    }

    public func display(_ text: String) async throws {
        let write = try write()
        let chunks = DisplayText.chunks(DisplayText.ascii(text), limit: mtu.maxMessagePayload)
        try await write(.display(chunks.first ?? ""))
        for chunk in chunks.dropFirst() { try await write(.response(chunk)) }
    }

    public func answerStream(claim: Bool) throws -> AnswerStream {
        let stream = AnswerStream(
            maxPayload: mtu.maxMessagePayload, prepare: DisplayText.ascii,
            send: AnswerStream.pieces(heading: AppMessage.display, text: AppMessage.response, error: AppMessage.error, end: .answerEnd, try write()))
        try book.begin(answer: stream, claim: claim)
        return stream
    }

    public func answerFinished(_ stream: AnswerStream?) {
        book.answerFinished(stream)
    }

    public func stopRecording() async throws {
        try await write()(.stopRecording)
    }

    public func setListening(_ on: Bool) async throws {
        try await write()(.listen(on))
    }

    /// The app records a question as on a tap, if still idle when the message comes.
    public func startQuestion(heard: String) async throws {
        let write = try write()
        guard book.status.state == .ready, book.answer == nil else { throw SessionError.busy }
        try await write(.wake(String(DisplayText.ascii(heard).utf8.prefix(mtu.maxMessagePayload)) ?? ""))
    }

    public func requestSceneFrame() async throws {
        if try book.readyForSceneFrame() { sceneFrame.abandon() }
        let write = try write()
        book.sceneFrameAsked = clock.now
        do {
            try await write(.capture(settings.scenePhoto))
        } catch {
            book.sceneFrameAsked = nil
            throw error
        }
    }

    /// The app's answer area (the line below it is its status).
    public func pageLayout() -> AnswerLayout { model.pageLayout }

    /// A speaker for one answer, when the glasses have one and the app runs: a new one replaces
    /// the last (whose replies then go unheard).
    public func speaker() -> (any GlassesSpeaker)? {
        guard let (_, format) = model.speaker, let audio, let writer, book.status.state == .ready || book.status.state == .busy
        else { return nil }
        let line = SpeakerLine()
        speakerLine = line
        return FrameSpeaker(format: format, channel: audio, line: line, clock: clock, logger: logger, send: writer)
    }

    /// Nothing more is written to the speaker from now on; the app stops it, says speechCut (and
    /// cancelled while the answer streams), and records the question.
    public func bargeIn() async throws {
        let write = try write()
        speakerLine?.update { $0.cut = true }
        try await write(.bargeIn)
    }

    /// The pages in pageText messages (form feeds between them), then pagesShow: the app shows the
    /// first and turns the page on each tap, with no round trip.
    public func showPages(_ pages: [String]) async throws {
        let write = try write()
        for piece in AnswerPages.wire(pages, limit: mtu.maxMessagePayload) { try await write(.pageText(piece)) }
        try await write(.pagesShow)
    }

    public func showAlert(_ text: String?) async throws {
        try await write()(.alert(String(DisplayText.ascii(text ?? "").utf8.prefix(mtu.maxMessagePayload)) ?? ""))
    }
}
