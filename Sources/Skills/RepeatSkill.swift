// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import Foundation

/// "What did I just ask", "repeat that": the last turn again, without asking the model to
/// recall it (and without adding a turn it would then see twice).
enum RepeatSkill {
    private static let askedQuestions: Set<String> = [
        "what did i just ask", "what did i ask", "what did i just ask you", "what did i ask you",
        "what was my last question", "what was my question", "what was the last question", "what was the question",
        "repeat my question", "repeat my last question", "repeat the question", "repeat the last question",
        "what did i just say", "what did i say",
    ]
    private static let answerQuestions: Set<String> = [
        "repeat", "repeat that", "repeat it", "say that again", "say it again", "say again", "repeat the answer",
        "repeat the last answer", "repeat your answer", "repeat your last answer", "can you repeat that",
        "could you repeat that", "can you say that again", "could you say that again", "what did you say",
        "what did you just say", "what was the answer", "what was your answer", "what was the last answer",
        "what was your last answer", "come again", "once more", "repeat that again",
    ]

    static func answer(_ text: String, lastTurn: (question: String, answer: String)?) -> TypedAnswer? {
        let wantsQuestion = askedQuestions.contains(text)
        guard wantsQuestion || answerQuestions.contains(text) else { return nil }
        guard let lastTurn else { return .text("There is nothing to repeat yet.") }
        if wantsQuestion {
            let question = lastTurn.question.trimmingCharacters(in: .whitespacesAndNewlines)
            return question.isEmpty ? .text("There is nothing to repeat yet.") : .text("You asked: \(question)")
        }
        let answer = lastTurn.answer.trimmingCharacters(in: .whitespacesAndNewlines)
        return answer.isEmpty ? .text("There is nothing to repeat yet.") : .text(answer)
    }
}
