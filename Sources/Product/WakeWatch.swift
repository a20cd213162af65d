// SPDX-License-Identifier: GPL-2.0-or-later
import Audio
import Glasses
import Logging

/// A keyword spotter as the product sees it: 16 kHz 16-bit audio in, wakes and progress out.
public protocol WakeSpotting: Sendable {
    func submit(_ samples: [Int16])
    /// Forget a half-heard phrase (the microphone served a question meanwhile).
    func restart()
}

/// What the spotter reports, in order.
public enum WakeSpotterEvent: Sendable, Equatable {
    case wake
    /// Another whole second of audio decoded: `seconds` in all.
    case decoded(seconds: UInt64)
}

/// Where the wake phrase stands, for Manager1.Wake.
public struct WakeStatus: Sendable, Equatable {
    public enum State: String, Sendable {
        /// Listening: the host's microphone, or ready glasses streaming theirs.
        case listening
        /// Waiting for the glasses (not ready yet), or for the host's microphone to come back.
        case waiting
        /// It cannot listen (see `error`).
        case failed
    }

    public var phrase: String
    public var source: String
    public var state: State
    /// Wakes heard since glassd started.
    public var heard: UInt32 = 0
    /// Seconds of audio the spotter has decoded since glassd started (reported every ten).
    public var listenedSeconds: UInt64 = 0
    public var error: String = ""

    public init(phrase: String, source: String, state: State) {
        self.phrase = phrase
        self.source = source
        self.state = state
    }
}

public protocol WakeReporting: Sendable {
    func wakeChanged(_ status: WakeStatus) async
}

/// The wake phrase: what the microphone hears goes to the spotter; a wake starts a question on
/// idle glasses as a tap would, their display saying what was heard. With the glasses' microphone,
/// each link of ready glasses is asked to listen (they start deaf), and a question's recording
/// restarts the spotter (it missed what the question took).
public actor WakeWatch {
    /// Where the audio comes from: the glasses' `.listening` events, or the host's microphone
    /// (16 kHz samples; the stream ends when the microphone is lost).
    public enum Source: Sendable {
        case glasses
        case host(AsyncStream<HostAudio>)
    }

    /// The host's microphone: samples, or a change in whether it records.
    public enum HostAudio: Sendable, Equatable {
        case samples([Int16])
        case started
        case stopped(String)
    }

    let session: any GlassesSession
    /// Taken when the watch is made: nothing the glasses report after that is missed.
    let glassesEvents: AsyncStream<SessionEvent>
    let spotter: any WakeSpotting
    let events: AsyncStream<WakeSpotterEvent>
    let source: Source
    let reporter: any WakeReporting
    let logger: Logger
    private var status: WakeStatus
    private var converter: (format: AudioFormat, converter: PCMConverter)?
    private var askedGeneration: UInt64?

    public init(
        session: any GlassesSession, spotter: any WakeSpotting, events: AsyncStream<WakeSpotterEvent>, phrase: String,
        source: Source, reporter: any WakeReporting, logger: Logger
    ) {
        self.session = session
        glassesEvents = session.subscribe()
        self.spotter = spotter
        self.events = events
        self.source = source
        self.reporter = reporter
        self.logger = logger
        let name = if case .glasses = source { "glasses" } else { "host" }
        status = WakeStatus(phrase: phrase, source: name, state: .waiting)
    }

    /// Every this many seconds of audio decoded, `listenedSeconds` is reported.
    public static let reportEvery: UInt64 = 10

    /// What glasses show when the phrase starts a question.
    public var heardText: String { "Heard \"\(status.phrase)\"" }

    /// Listens until cancelled.
    public func run() async {
        await reporter.wakeChanged(status)
        // Glasses ready before the watch was made (the model takes a moment to load) sent their
        // status before it subscribed: it starts from where they stand.
        await glassesChanged(await session.current)
        await withDiscardingTaskGroup { group in
            group.addTask { await self.followSpotter() }
            group.addTask { await self.followGlasses() }
            if case .host(let audio) = source {
                group.addTask { await self.followHost(audio) }
            }
        }
    }

    private func followSpotter() async {
        for await event in events {
            switch event {
            case .wake: await woke()
            case .decoded(let seconds):
                status.listenedSeconds = seconds
                // Not every second: listening all day must not wake every watcher of the bus.
                if seconds % Self.reportEvery == 0 { await reporter.wakeChanged(status) }
            }
        }
    }

    private func followGlasses() async {
        for await event in glassesEvents {
            switch event {
            case .status(let current):
                await glassesChanged(current)
            case .glasses(.listening(let bytes, let format)):
                hear(bytes, format: format)
            case .glasses(.questionStart):
                spotter.restart()
            case .glasses:
                break
            }
        }
    }

    private func followHost(_ audio: AsyncStream<HostAudio>) async {
        for await piece in audio {
            switch piece {
            case .samples(let samples): spotter.submit(samples)
            case .started: await set(.listening)
            case .stopped(let reason):
                spotter.restart()
                await set(.waiting, error: reason)
            }
        }
    }

    private func glassesChanged(_ current: SessionStatus) async {
        guard case .glasses = source else { return }
        guard current.state == .ready || current.state == .busy else {
            askedGeneration = nil
            return await set(.waiting)
        }
        guard askedGeneration != current.generation else { return }
        askedGeneration = current.generation
        do {
            try await session.setListening(true)
            await set(.listening)
        } catch let error as SessionError {
            if case .unsupported(let reason) = error { await set(.failed, error: reason) }
            askedGeneration = nil  // not ready after all: asked again on the next status
        } catch {
            askedGeneration = nil
        }
    }

    private func hear(_ bytes: [UInt8], format: AudioFormat) {
        if converter?.format != format {
            guard let input = try? PCMInput(format),
                let made = try? PCMConverter(input: input)
            else {
                return logger.warning("[wake] the glasses listen in \(format), which the spotter cannot take")
            }
            converter = (format, made)
        }
        spotter.submit(converter!.converter.convert(bytes))
    }

    private func woke() async {
        status.heard &+= 1
        await reporter.wakeChanged(status)
        do {
            try await session.startQuestion(heard: heardText)
            logger.info("[wake] heard \"\(status.phrase)\": a question starts")
        } catch SessionError.busy {
            logger.info("[wake] heard \"\(status.phrase)\" while the glasses were busy")
        } catch {
            logger.notice("[wake] heard \"\(status.phrase)\", but no question could start: \(error)")
        }
    }

    private func set(_ state: WakeStatus.State, error: String = "") async {
        guard status.state != state || status.error != error else { return }
        status.state = state
        status.error = error
        await reporter.wakeChanged(status)
    }
}
