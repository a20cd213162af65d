// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Concurrency
import Foundation
import Glasses
import Logging
import Scene

/// Scene mode: while the mode is `scene`, the glasses are asked for a photo every interval. Each
/// frame passes the quality filter (dark, blurry, unchanged) before anything leaves the host;
/// at most one goes to the vision model at a time, with a prompt that asks for `CAUTION <hazard>
/// <direction>` or `CLEAR`. A change of that state is signalled (Alert) and shown on the glasses;
/// a frame that raised a caution is kept with the photos. Frames are never conversation turns.
public actor SceneWatch {
    public struct Settings: Sendable {
        public var interval: Duration = .seconds(4)
        public var thresholds = FrameThresholds()

        public init(interval: Duration, thresholds: FrameThresholds) {
            self.interval = interval
            self.thresholds = thresholds
        }
    }

    static let hazardPrompt = """
        You look through the smart glasses of a person who cannot see well. Look at the photo for \
        hazards in their way: steps, kerbs, holes, poles, obstacles, vehicles, people about to \
        collide. Reply with exactly one line: CAUTION <hazard> <direction> (direction: left, right \
        or ahead), for example "CAUTION step ahead", or CLEAR when nothing is in the way. No other words.
        """
    static let question = "What is in my way?"
    static let clear = "CLEAR"
    let session: any GlassesSession
    let client: OpenAIChatClient?
    let visionModel: String?
    /// False with the embedded default backend (a text model): no frames are taken.
    let sees: Bool
    let photos: any PhotoKeeping
    let signals: any QueryEvents
    let mode: ModeSetting
    let settings: Settings
    let logger: Logger

    private var filter: FrameFilter
    private let decoder: JPEGDecoder?
    private var frames: UInt32 = 0
    private var inFlight = false
    /// The hazard state last signalled (CLEAR at the start and after leaving scene mode).
    private var hazard = clear
    /// The newest frame received: a tap in scene mode asks about it.
    public private(set) var latestFrame: [UInt8]?

    public init(
        session: any GlassesSession, client: OpenAIChatClient?, visionModel: String?, sees: Bool, photos: any PhotoKeeping,
        signals: any QueryEvents, mode: ModeSetting, settings: Settings, logger: Logger
    ) {
        self.session = session
        self.client = client
        self.visionModel = visionModel
        self.sees = sees
        self.photos = photos
        self.signals = signals
        self.mode = mode
        self.settings = settings
        self.logger = logger
        filter = FrameFilter(thresholds: settings.thresholds)
        decoder = try? JPEGDecoder()
    }

    /// Asks for frames while in scene mode and handles the frames the glasses send, until `inputs` ends.
    public func run(_ inputs: AsyncStream<GlassesEvent>) async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.captureWhileInSceneMode() }
            for await event in inputs {
                if case .sceneFrame(let jpeg) = event, let frame = received(jpeg) {
                    group.addTask { await self.ask(frame.number, frame.jpeg) }
                }
            }
            group.cancelAll()
        }
    }

    // MARK: Capturing

    private func captureWhileInSceneMode() async {
        let clock = ContinuousClock()
        let forever = Duration.seconds(86_400)
        while !Task.isCancelled {
            guard (try? await mode.watched.wait(timeout: forever, clock: clock, until: { $0 == .scene })) != nil else { continue }
            guard sees else {
                // Photos over the link every few seconds, for a model that cannot look at them.
                logger.notice("scene mode: the model cannot see photos (the embedded default backend): no frames are taken.")
                _ = try? await mode.watched.wait(timeout: forever, clock: clock) { $0 != .scene }
                continue
            }
            logger.info("scene mode: watching", metadata: ["interval_s": "\(settings.interval.components.seconds)"])
            while mode.mode == .scene && !Task.isCancelled {
                do {
                    try await session.requestSceneFrame()
                } catch {
                    logger.debug("no scene frame this time: \(error)")
                }
                // The interval, or less: leaving scene mode stops the captures at once.
                _ = try? await mode.watched.wait(timeout: settings.interval, clock: clock) { $0 != .scene }
            }
            await left()
        }
    }

    private func left() async {
        logger.info("scene mode: stopped")
        filter.reset()
        if hazard != Self.clear {
            hazard = Self.clear
            try? await session.showAlert(nil)
        }
    }

    // MARK: Frames

    /// A frame from the glasses (nil: too large); returns it when it is to be sent.
    private func received(_ jpeg: [UInt8]?) -> (number: UInt32, jpeg: [UInt8])? {
        // A frame that arrives after leaving scene mode is dropped unseen.
        guard mode.mode == .scene else { return nil }
        frames &+= 1
        let verdict: FrameVerdict =
            if let jpeg, let decoder {
                inFlight ? .busy : filter.check(jpeg: jpeg, decoder: decoder).verdict
            } else {
                .error  // too large, or no decoder
            }
        logger.debug("scene frame", metadata: ["frame": "\(frames)", "verdict": "\(verdict.rawValue)", "bytes": "\(jpeg?.count ?? 0)"])
        // Scene mode may have ended since the look above: then not even the signal goes out.
        guard mode.whileIn(.scene, { signals.sceneFrame(frames, verdict.rawValue) }), let jpeg, verdict != .error else { return nil }
        latestFrame = jpeg
        guard verdict == .sent else { return nil }
        inFlight = true
        return (frames, jpeg)
    }

    // MARK: The vision model

    private func ask(_ number: UInt32, _ jpeg: [UInt8]) async {
        defer { inFlight = false }
        guard let client else {
            logger.notice("scene mode: no assistant server is configured")
            return
        }
        let answer: String
        do {
            answer = try await client.complete(
                [ChatMessage(.system, Self.hazardPrompt), ChatMessage(.user, Self.question, imageJPEG: jpeg)],
                model: visionModel
            ) { _ in }
        } catch {
            logger.notice("scene frame not answered: \(error)", metadata: ["frame": "\(number)"])
            return
        }
        let state = Self.hazardState(answer)
        if state == nil {
            // What the model saw is the wearer's surroundings: its words only at debug.
            logger.notice("scene answer is neither CAUTION nor CLEAR; taken as CLEAR", metadata: ["frame": "\(number)"])
            logger.debug("scene answer", metadata: ["frame": "\(number)", "answer": "\(answer)"])
        }
        let now = state ?? Self.clear
        guard now != hazard, mode.whileIn(.scene, { signals.alert(now) }) else { return }
        hazard = now
        logger.info("scene hazard changed", metadata: ["frame": "\(number)", "caution": "\(now != Self.clear)"])
        logger.debug("scene alert", metadata: ["frame": "\(number)", "alert": "\(now)"])
        do {
            try await session.showAlert(now == Self.clear ? nil : now)
        } catch {
            logger.info("cannot show the alert on the glasses: \(error)")
        }
        guard now != Self.clear else { return }
        do {
            try await photos.save(queryID: "scene/\(number)-\(UUID().uuidString.lowercased())", jpeg: jpeg, at: Int64(Date().timeIntervalSince1970 * 1000))
        } catch {
            logger.warning("the caution frame could not be kept: \(error)")
        }
    }

    /// `CAUTION <hazard> <direction>` (at least two words after CAUTION) or `CLEAR`, from the
    /// model's first line without surrounding punctuation; nil for anything else.
    static func hazardState(_ answer: String) -> String? {
        let line = answer.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let trimmed = line.trimmingCharacters(in: .whitespaces.union(.punctuationCharacters).union(CharacterSet(charactersIn: "*`\"")))
        let words = trimmed.split(whereSeparator: \.isWhitespace).map { $0.trimmingCharacters(in: .punctuationCharacters) }
            .filter { !$0.isEmpty }
        guard let first = words.first?.uppercased() else { return nil }
        if first == clear && words.count == 1 { return clear }
        guard first == "CAUTION", words.count >= 3 else { return nil }
        return (["CAUTION"] + words.dropFirst()).joined(separator: " ")
    }
}
