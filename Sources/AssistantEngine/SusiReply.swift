// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel

/// What SUSI answered, as glassd can show it.
public struct SusiReply: Sendable, Equatable {
    /// The parts of the first answer's actions, in the order SUSI asked them performed.
    public var answer: TypedAnswer
    /// The type of every action that gave no part (an unknown type without text, a known one
    /// missing what it needs, a list or table with no rows), in order: for the caller's log.
    public var skipped: [String]

    public init(answer: TypedAnswer, skipped: [String] = []) {
        self.answer = answer
        self.skipped = skipped
    }
}
