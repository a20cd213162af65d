// SPDX-License-Identifier: GPL-2.0-or-later
import Product
import Testing

@Suite("Whether the words so far end a sentence", .timeLimit(.minutes(1)))
struct SentenceEndTests {
    @Test(
        "finished: Whisper's end punctuation after a word a sentence ends on",
        arguments: [
            "What is the capital of France?", "What time is it?", "Tell me about the weather in Paris tomorrow.",
            "Turn it off!", " How tall is Mount Everest? ", "What's 12 times 7?", "Who wrote Hamlet?",
        ])
    func finished(_ text: String) {
        #expect(SentenceEnd.looksFinished(text))
        #expect(SentenceEnd.looksFinished(text, language: "en"))
    }

    @Test(
        "unfinished: a question cut at a pause (a dangling word, no end punctuation, trailing off)",
        arguments: [
            "What is the capital of", "What is the capital of?", "Tell me about the weather in...",
            "Tell me about the weather in Paris…", "Remind me to", "I want to go to the", "Call my wife and.",
            "What about, um.", "Translate this,", "", "   ", "?", "Show me the.", "Is it going to rain with?",
            "what time is it",
        ])
    func unfinished(_ text: String) {
        #expect(!SentenceEnd.looksFinished(text))
    }

    @Test("another language than English has no word list: never finished early")
    func otherLanguage() {
        #expect(!SentenceEnd.looksFinished("Wie spät ist es?", language: "de"))
        #expect(SentenceEnd.looksFinished("What time is it?", language: "EN"))
        #expect(SentenceEnd.looksFinished("What time is it?", language: ""))
    }
}
