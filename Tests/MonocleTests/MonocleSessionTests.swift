// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Glasses
import LinkKit
import Logging
import Monocle
import Synchronization
import Testing

@Suite("Monocle session", .timeLimit(.minutes(5)))
struct MonocleSessionTests {
    static let scripts = DeviceScripts(files: [
        .init(name: "glassd_ui.py", contents: Array("x=1\n".utf8)), .init(name: "main.py", contents: Array("run()\n".utf8)),
    ])

    private func session(configure: (inout SessionSettings) -> Void = { _ in }) -> MonocleSession<ContinuousClock> {
        var settings = SessionSettings()
        settings.repl.drain = .milliseconds(10)
        settings.repl.bannerTimeout = .milliseconds(300)
        settings.startTimeout = .seconds(2)
        configure(&settings)
        return MonocleSession(scripts: Self.scripts, clock: ContinuousClock(), settings: settings, logger: Logger(label: "test"))
    }

    /// States until `ready` (or `error`), in order.
    private func states(_ events: AsyncStream<SessionEvent>) async -> [SessionState] {
        var seen: [SessionState] = []
        for await event in events {
            guard case .status(let status) = event else { continue }
            if seen.last != status.state { seen.append(status.state) }
            if status.state == .ready || status.state == .error { break }
        }
        return seen
    }

    @Test("scripts streamed on the data channel to a device whose receiver never answers: sent over the REPL instead, and ready")
    func streamFallback() async throws {
        let session = session { settings in
            settings.streamScriptsFrom = 0
            settings.scriptStream.ackTimeout = .milliseconds(30)
            settings.scriptStream.silences = 1
        }
        let device = FakeMonocle(scripts: Self.scripts)
        let (links, feed) = AsyncStream.makeStream(of: LinkEvent.self)
        let run = Task { await session.run(links: links) { _ in } }
        feed.yield(.up(device.link, generation: 1))
        for await event in session.subscribe() {
            if case .status(let status) = event, status.state == .ready || status.state == .error {
                #expect(status.state == .ready, "\(status.reason)")
                break
            }
        }
        #expect(device.serial.commands.contains(FPGACommands.receiverDefinition))
        #expect(device.data.writes.withLock { !$0.isEmpty }, "chunks were sent")
        #expect(device.serial.commands.filter { $0.contains("a2b_base64") }.count == 2)
        #expect(device.flash.withLock { $0.stored } == Self.scripts.version)
        feed.finish()
        await run.value
    }

    @Test("a fresh device: handshake, checking, uploading, starting, ready; a current one: no upload, no reboot")
    func bringUp() async throws {
        let session = session()
        let device = FakeMonocle(scripts: Self.scripts)
        let (links, feed) = AsyncStream.makeStream(of: LinkEvent.self)
        let run = Task { await session.run(links: links) { _ in } }
        var events = session.subscribe().makeAsyncIterator()
        func statesUntilReady() async -> [SessionState] {
            var seen: [SessionState] = []
            while let event = await events.next() {
                guard case .status(let status) = event else { continue }
                if seen.last != status.state { seen.append(status.state) }
                if status.state == .ready || status.state == .error { break }
            }
            return seen
        }

        feed.yield(.up(device.link, generation: 1))
        #expect(await statesUntilReady() == [.connecting, .handshake, .checking, .uploading, .starting, .ready])
        #expect(device.serial.state.withLock { $0.reboots } == 1)
        let uploads = device.serial.commands.filter { $0.contains("a2b_base64") }.count
        #expect(uploads == 2)
        let status = await session.current
        #expect(status.info?.firmwareVersion == "v23.248.0754")
        #expect(status.info?.version(of: "fpga") == "v23.230.0808")
        #expect(status.info?.battery == 77)
        #expect(status.info?.runningScripts == Self.scripts.version)

        try await session.display("Café ünd “more”")
        #expect(device.data.written == [.display("Cafe und \"more\"")])

        // The scripts report battery changes; a malformed frame in between is dropped, nothing else.
        device.data.incoming.push(Array("bat:1000".utf8))
        device.data.incoming.push(Array("???".utf8))
        device.data.incoming.push(DataMessage.battery(55).encoded)
        while let event = await events.next() {
            if case .status(let status) = event, status.info?.battery == 55 { break }
        }
        #expect(await session.current.state == .ready)

        // A tap's question: busy while capturing, the audio handed on in the format ast: names
        // (glassd's scripts record at 16 kHz), ready after the answer.
        let recorded = AudioFormat(sampleRate: 16_000, bits: 8)
        device.data.incoming.push(Array("ast:16,8".utf8))
        device.data.incoming.push(DataMessage.audioData([1, 2, 3]).encoded)
        device.data.incoming.push(DataMessage.audioEnd.encoded)
        var handedOn: [GlassesEvent] = []
        while let event = await events.next() {
            if case .glasses(let glasses) = event { handedOn.append(glasses) }
            if handedOn.count == 3 { break }
        }
        #expect(handedOn == [.questionStart(photo: false, audio: recorded), .audio([1, 2, 3]), .audioEnd])
        #expect(await session.current.state == .busy)
        try await session.show("An answer, in two parts", error: false)
        await session.answerFinished()
        #expect(await session.current.state == .ready)
        #expect(device.data.written.last == .response("An answer, in two parts"))
        while let event = await events.next() {
            if case .status(let status) = event, status.state == .ready { break }
        }

        // The link drops and comes back: the scripts are current and running.
        feed.yield(.down(generation: 1, reason: "test"))
        let before = device.serial.commands.count
        feed.yield(.up(device.link, generation: 2))
        #expect(await statesUntilReady().suffix(5) == [.connecting, .handshake, .checking, .starting, .ready])
        let after = Array(device.serial.commands[before...])
        #expect(!after.contains { $0.contains("a2b_base64") })
        #expect(after.last == DeviceCommands.resume)
        #expect(device.serial.state.withLock { $0.reboots } == 1)
        #expect(!device.serial.written.contains(0x1C))
        feed.finish()
        await run.value
    }

    @Test("Display before the glasses are ready is NotConnected")
    func notReady() async {
        let session = session()
        await #expect(throws: SessionError.notConnected("The glasses are not ready (disconnected).")) {
            try await session.display("hi")
        }
    }

    @Test("one answer owns the glasses: a claim only when idle, a cancel tap frees them, a stale answer's end frees nothing")
    func answerOwnership() async throws {
        let session = session()
        let device = FakeMonocle(scripts: Self.scripts)
        let (links, feed) = AsyncStream.makeStream(of: LinkEvent.self)
        let run = Task { await session.run(links: links) { _ in } }
        var events = session.subscribe().makeAsyncIterator()
        func until(_ state: SessionState) async {
            while let event = await events.next() {
                if case .status(let status) = event, status.state == state { return }
            }
        }
        feed.yield(.up(device.link, generation: 1))
        await until(.ready)
        let first = try await session.answerStream(claim: true)
        #expect(await session.current.state == .busy)
        await #expect(throws: SessionError.busy) { try await session.answerStream(claim: true) }
        // A tap on the glasses cancels the answer shown: it writes nothing more.
        device.data.incoming.push(DataMessage.cancelled.encoded)
        await until(.ready)
        first.append("never shown ")
        first.finish()
        try await first.run()
        #expect(!device.data.written.contains(.response("never shown ")))
        let second = try await session.answerStream(claim: true)
        await session.answerFinished(first)
        #expect(await session.current.state == .busy)
        await session.answerFinished(second)
        #expect(await session.current.state == .ready)
        feed.finish()
        await run.value
    }

    @Test("a device that never enters the REPL: error with a reason, and the link is restarted")
    func givesUp() async throws {
        let session = session()
        let device = FakeMonocle(scripts: Self.scripts)
        device.serial.state.withLock { $0.swallowCtrlA = 1000 }
        let restarted = OneShotEvent()
        let reasons = Mutex<[String]>([])
        let (links, feed) = AsyncStream.makeStream(of: LinkEvent.self)
        let run = Task {
            await session.run(links: links) { reason in
                reasons.withLock { $0.append(reason) }
                restarted.fire()
            }
        }
        feed.yield(.up(device.link, generation: 1))
        #expect(await states(session.subscribe()) == [.connecting, .handshake, .error])
        await restarted.wait()
        #expect(await session.current.reason == "The glasses did not enter the raw REPL (4 attempts).")
        #expect(reasons.withLock { $0 } == ["the glasses did not enter the raw REPL (4 attempts)"])
        feed.finish()
        await run.value
    }
}

@Suite("Data link pacing", .timeLimit(.minutes(5)))
struct DataLinkTests {
    @Test("no more than 4 messages wait on the device; acks make room; rdy: starts the count over")
    func window() async throws {
        let channel = FakeDataChannel()
        // No silence in this test: on a loaded machine (the full suite's start) the test process
        // has stalled for over a minute, and a real clock's silence would let the window go.
        let link = DataLink(channel: channel, clock: ContinuousClock(), window: 4, silence: .seconds(3600))
        let sender = Task {
            for i in 0..<6 { try await link.send(.response("\(i)")) }
        }
        // Four go out, then it waits.
        while channel.writes.withLock({ $0.count }) < 4 { await Task.yield() }
        for _ in 0..<100 { await Task.yield() }
        #expect(channel.writes.withLock { $0.count } == 4)
        await link.acknowledge(2)
        try await sender.value
        #expect(channel.written.map(\.command) == Array(repeating: "res:", count: 6))
        // A bogus count beyond what was sent moves nothing.
        await link.acknowledge(500)
        await link.reset()
        try await link.send(.response("after reset"))
        #expect(channel.writes.withLock { $0.count } == 7)
    }

    @Test("a message over one packet is refused")
    func tooLong() async {
        let link = DataLink(channel: FakeDataChannel(), clock: ContinuousClock())
        await #expect(throws: ChannelError.tooLong(size: 304, limit: 253)) {
            try await link.send(.response(String(repeating: "x", count: 300)))
        }
    }
}
