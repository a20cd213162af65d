// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine

/// What the product says about questions and scene mode as they happen. The daemon sends these
/// as org.glassd.Manager1 signals; tests record them.
public protocol QueryEvents: Sendable {
    func transcribed(_ id: String, _ text: String)
    func answerDelta(_ id: String, _ text: String)
    func answered(_ id: String, question: String, answer: String)
    /// The answer's structure, after `answered` (every answer; most are one text part).
    func answerTyped(_ id: String, _ reply: AssistantReply)
    /// `error` as thrown: the daemon names it (ErrorMapping), the glasses got `GlassesWording`.
    func failed(_ id: String, _ error: any Error)
    /// Scene mode: frame `number` and what became of it (sent, dark, blurry, unchanged, busy, error).
    func sceneFrame(_ number: UInt32, _ verdict: String)
    /// Scene mode: the hazard state changed ("CAUTION <hazard> <direction>" or "CLEAR").
    func alert(_ text: String)
}

extension QueryEvents {
    public func answerTyped(_ id: String, _ reply: AssistantReply) {}
}

/// Where the transcriptions of spoken questions are kept (with their ids), until consumed.
public protocol TranscriptionRecords: Sendable {
    func insert(id: String, text: String, device: String?, at unixMS: Int64) async throws
    func markConsumed(id: String, at unixMS: Int64) async throws
}

/// Where the photos of questions (and scene cautions) are kept.
public protocol PhotoKeeping: Sendable {
    func save(queryID: String, jpeg: [UInt8], at unixMS: Int64) async throws
}
