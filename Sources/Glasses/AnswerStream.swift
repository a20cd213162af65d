// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Synchronization

/// One answer on its way to the glasses while it streams. Pieces are appended as the model sends
/// them and never wait on the link; `run()` writes what has gathered as `res:` messages, whole
/// words only (a half word would show, then change), so when the link is slower than the model
/// the pieces pile up and go out together in fewer writes. At the end an error follows in red,
/// then `.end` tells the glasses the answer is complete. Each kind of glasses maps the pieces onto
/// its own messages.
public final class AnswerStream: Sendable {
    /// One write to the glasses.
    public enum Piece: Sendable, Equatable {
        /// Clear the answer area and show this.
        case heading(String)
        /// Append answer text.
        case text(String)
        /// Append text in red.
        case error(String)
        /// The answer is complete.
        case end
    }

    private struct State {
        var heading: String?
        var pending = ""
        var finished = false
        var error: String?
        var cancelled = false
        var characters = 0
        var firstWordShown: ContinuousClock.Instant?
        var lastWordShown: ContinuousClock.Instant?
    }

    /// A word longer than a display line goes out without waiting for its end.
    static let longestWord = 26

    private let state = Mutex(State())
    private let wake = Pulse()
    private let maxPayload: Int
    private let prepare: @Sendable (String) -> String
    private let send: @Sendable (Piece) async throws -> Void

    /// `send` writes one piece to the glasses (paced by the link); `maxPayload` is the longest
    /// text, in UTF-8 bytes, one piece carries; `prepare` fits text to the display's font.
    public init(
        maxPayload: Int, prepare: @escaping @Sendable (String) -> String = { $0 },
        send: @escaping @Sendable (Piece) async throws -> Void
    ) {
        precondition(maxPayload > 0)
        self.maxPayload = maxPayload
        self.prepare = prepare
        self.send = send
    }

    /// Clears the answer area and shows `text` above the answer (the question, as heard), on
    /// lines of its own.
    public func heading(_ text: String) {
        state.withLock { [prepare] in $0.heading = prepare(text) + "\n" }
        wake.pulse()
    }

    /// Adds answer text (fitted to the display's font).
    public func append(_ text: String) {
        let fitted = prepare(text)
        guard !fitted.isEmpty else { return }
        state.withLock {
            $0.pending += fitted
            $0.characters += fitted.count
        }
        wake.pulse()
    }

    /// The characters of answer text given so far (its reading time).
    public var characters: Int { state.withLock { $0.characters } }

    /// No more text comes; `error`, if any, is shown after it in red.
    public func finish(error: String? = nil) {
        state.withLock { state in
            state.finished = true
            state.error = error.map(prepare)
        }
        wake.pulse()
    }

    /// When the answer's first words were written to the glasses, and when its end was (the turn's
    /// timings); nil until then.
    public var shown: (first: ContinuousClock.Instant?, last: ContinuousClock.Instant?) {
        state.withLock { ($0.firstWordShown, $0.lastWordShown) }
    }

    /// The answer is abandoned (the user cancelled it on the glasses): nothing more is written.
    public func cancel() {
        state.withLock { $0.cancelled = true }
        wake.pulse()
    }

    /// Writes until the answer is finished and shown (or cancelled). Throws what the link throws.
    public func run() async throws {
        while true {
            let ticket = wake.ticket()
            let (heading, text, finishedWith, cancelled) = state.withLock {
                state -> (String?, String, String??, Bool) in
                let text = Self.take(&state.pending, all: state.finished)
                let done = state.finished && state.pending.isEmpty ? Optional(state.error) : nil
                defer { state.heading = nil }
                return (state.heading, text, done, state.cancelled)
            }
            if cancelled { return }
            if let heading {
                let chunks = DisplayText.chunks(heading, limit: maxPayload)
                try await send(.heading(chunks.first ?? ""))
                for chunk in chunks.dropFirst() { try await send(.text(chunk)) }
            }
            for chunk in DisplayText.chunks(text, limit: maxPayload) {
                try await send(.text(chunk))
                state.withLock { $0.firstWordShown = $0.firstWordShown ?? .now }
            }
            if let error = finishedWith {
                for chunk in DisplayText.chunks(error ?? "", limit: maxPayload) { try await send(.error(chunk)) }
                try await send(.end)
                state.withLock { $0.lastWordShown = .now }
                return
            }
            if text.isEmpty && heading == nil { await wake.wait(after: ticket) }
            try Task.checkCancellation()
        }
    }

    /// What of `pending` can be shown now: everything at the end, else up to the last break
    /// between words (or a word too long for a line).
    static func take(_ pending: inout String, all: Bool) -> String {
        if all || pending.utf8.count > longestWord && !pending.contains(where: { $0 == " " || $0 == "\n" }) {
            defer { pending = "" }
            return pending
        }
        guard let last = pending.lastIndex(where: { $0 == " " || $0 == "\n" }) else { return "" }
        let cut = pending.index(after: last)
        defer { pending = String(pending[cut...]) }
        return String(pending[..<cut])
    }
}
