// SPDX-License-Identifier: GPL-2.0-or-later
import Product
import Testing

@Suite("How the words so far end", .timeLimit(.minutes(1)))
struct SentenceEndTests {
    @Test(
        "a question: Whisper's question mark after a word a sentence ends on",
        arguments: ["What is the capital of France?", "What time is it?", " How tall is Mount Everest? ", "What's 12 times 7?", "Who wrote Hamlet?"])
    func question(_ text: String) {
        #expect(SentenceEnd(text) == .question)
        #expect(SentenceEnd(text, language: "en") == .question)
    }

    @Test(
        "a statement: a full stop or an exclamation mark after a word a sentence ends on (it may go on after a breath)",
        arguments: ["Tell me about the weather in Paris tomorrow.", "Turn it off!", "Who wrote the book.", "Remind me to buy milk."])
    func statement(_ text: String) {
        #expect(SentenceEnd(text) == .statement)
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
        #expect(SentenceEnd(text) == .unfinished)
    }

    @Test("another language than English has no word list: never finished early")
    func otherLanguage() {
        #expect(SentenceEnd("Wie spät ist es?", language: "de") == .unfinished)
        #expect(SentenceEnd("What time is it?", language: "EN") == .question)
        #expect(SentenceEnd("What time is it?", language: "") == .question)
    }
}
