// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel

/// An answer glassd gives itself, without a server (a local skill's).
public struct LocalAnswer: Sendable, Equatable {
    /// Who answered, as AnswerOf's `answered_by` says: `skill:time`, say.
    public var answeredBy: String
    public var answer: TypedAnswer

    public init(answeredBy: String, answer: TypedAnswer) {
        self.answeredBy = answeredBy
        self.answer = answer
    }
}

/// Answers a question locally, or nil to leave it to the model.
public typealias LocalAnswering = @Sendable (String) async -> LocalAnswer?

/// What an assistant turn produced: the answer's text (stored, sent as Answered), its typed form,
/// and who answered when it was not the model.
public struct AssistantReply: Sendable, Equatable {
    public var text: String
    public var typed: TypedAnswer
    public var answeredBy: String?

    public init(text: String, typed: TypedAnswer, answeredBy: String?) {
        self.text = text
        self.typed = typed
        self.answeredBy = answeredBy
    }
}

/// Where answers that are more than text are kept, by query id (AnswerOf).
public protocol TypedAnswerStore: Sendable {
    func save(queryID: String, answer: TypedAnswer, answeredBy: String?, at unixMS: Int64) async throws
    func load(queryID: String) async throws -> (answer: TypedAnswer, answeredBy: String?)?
}
