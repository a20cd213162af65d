// SPDX-License-Identifier: GPL-2.0-or-later

/// Pairs final transcript lines into History's turns: what the wearer said (several final lines
/// before the agent answers are one question) and the agent's final answer to it. An answer with
/// no question before it (the agent's greeting) makes no turn: History's turns are questions.
struct TurnPairing {
    struct Turn: Equatable {
        var number: Int
        var question: String
        var answer: String
    }

    private var question: [String] = []
    private var count = 0

    mutating func add(_ line: TranscriptBoard.Line) -> Turn? {
        switch line.role {
        case .user:
            question.append(line.text)
            return nil
        case .assistant:
            guard !question.isEmpty else { return nil }
            count += 1
            defer { question = [] }
            return Turn(number: count, question: question.joined(separator: " "), answer: line.text)
        }
    }
}
