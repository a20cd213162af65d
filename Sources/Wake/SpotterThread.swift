// SPDX-License-Identifier: GPL-2.0-or-later
import Dispatch
import Foundation
import Synchronization

/// What the spotter thread reports: a wake, or another whole second of audio decoded (so a
/// listener can tell that what it handed over has been heard).
public enum SpotterEvent: Sendable, Equatable {
    case wake
    case decoded(seconds: UInt64)
}

/// A PhraseSpotter on a thread of its own (decoding is CPU work, kept off Swift's cooperative
/// pool): audio is handed over with `submit`, wakes and progress come out of `events`. Audio that piles up
/// beyond a few seconds (a machine too slow to keep up) is dropped oldest first: a wake heard
/// late is worth less than one heard now.
///
/// The thread holds the state it shares (`SpotterCore`), never this object: releasing it
/// finishes the thread as `finish()` does.
public final class SpotterThread: Sendable {
    /// How much audio may wait for the spotter.
    public static let backlogLimit = 3 * PhraseSpotter.sampleRate

    private let core: SpotterCore
    /// The phrase as the spotter listens for it (normalized).
    public let phrase: String
    public var events: AsyncStream<SpotterEvent> { core.events }

    /// Loads the model (on the caller's thread: it takes a moment, once) and starts the thread.
    public init(_ settings: WakeSettings) throws(WakeError) {
        let spotter = try PhraseSpotter(settings)
        phrase = spotter.phrase
        core = SpotterCore()
        let box = SpotterBox(spotter)
        let thread = Thread { [core] in core.loop(box.take()) }
        thread.name = "wake phrase"
        thread.start()
    }

    deinit { core.finish() }

    /// Audio for the spotter: 16 kHz 16-bit mono.
    public func submit(_ samples: [Int16]) { core.submit(samples) }

    /// Forget what was heard so far (the microphone served a question meanwhile).
    public func restart() { core.restart() }

    /// Samples decoded so far.
    public var decodedSamples: UInt64 { core.decodedSamples }

    /// Ends the thread (and `events`) once it has decoded what was submitted before.
    public func finish() { core.finish() }
}

/// What the spotter thread and its owner share.
private final class SpotterCore: Sendable {
    private struct State: Sendable {
        var chunks: [[Int16]] = []
        var queued = 0
        var restart = false
        var stopped = false
        var heardSamples: UInt64 = 0
    }

    private let state = Mutex(State())
    private let signal = DispatchSemaphore(value: 0)
    let events: AsyncStream<SpotterEvent>
    private let continuation: AsyncStream<SpotterEvent>.Continuation

    init() {
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(64))
    }

    func submit(_ samples: [Int16]) {
        guard !samples.isEmpty else { return }
        let queued = state.withLock { s -> Bool in
            guard !s.stopped else { return false }
            s.chunks.append(samples)
            s.queued += samples.count
            while s.queued > SpotterThread.backlogLimit, s.chunks.count > 1 {
                s.queued -= s.chunks.removeFirst().count
            }
            return true
        }
        if queued { signal.signal() }
    }

    func restart() {
        state.withLock { $0.restart = true }
        signal.signal()
    }

    var decodedSamples: UInt64 { state.withLock { $0.heardSamples } }

    func finish() {
        state.withLock { $0.stopped = true }
        signal.signal()
    }

    func loop(_ spotter: PhraseSpotter) {
        while true {
            signal.wait()
            let (chunks, restart, stopped) = state.withLock { s in
                defer {
                    s.chunks = []
                    s.queued = 0
                    s.restart = false
                }
                return (s.chunks, s.restart, s.stopped)
            }
            if restart { spotter.restart() }
            for chunk in chunks {
                let woke = spotter.feed(chunk)
                let (before, after) = state.withLock { s in
                    defer { s.heardSamples += UInt64(chunk.count) }
                    return (s.heardSamples, s.heardSamples + UInt64(chunk.count))
                }
                if woke { continuation.yield(.wake) }
                let rate = UInt64(PhraseSpotter.sampleRate)
                if after / rate > before / rate { continuation.yield(.decoded(seconds: after / rate)) }
            }
            if stopped {
                continuation.finish()
                return
            }
        }
    }
}

/// Hands the spotter (not Sendable: it belongs to one thread) to the thread that owns it from
/// then on; it is taken exactly once.
private final class SpotterBox: Sendable {
    private let spotter: Mutex<PhraseSpotter?>
    init(_ spotter: sending PhraseSpotter) { self.spotter = Mutex(spotter) }
    func take() -> PhraseSpotter { spotter.withLock { $0.take()! } }
}
