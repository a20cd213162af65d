// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Foundation
import GRDB
import Storage
import Testing

@Suite("SQLite token counts per turn", .timeLimit(.minutes(5)))
struct TokenStorageTests {
    private func directory() -> String {
        NSTemporaryDirectory() + "glassd-db-\(UUID().uuidString)"
    }

    /// (role, prompt_tokens, completion_tokens) of every message, in order; NULL as -1.
    private func columns(_ dir: String) throws -> [String] {
        let queue = try DatabaseQueue(path: dir + "/glassd.sqlite")
        defer { try? queue.close() }
        return try queue.read { db in
            try Row.fetchAll(
                db, sql: "SELECT role, IFNULL(prompt_tokens, -1), IFNULL(completion_tokens, -1) FROM messages ORDER BY id"
            ).map { "\($0[0] as String) \($0[1] as Int64) \($0[2] as Int64)" }
        }
    }

    @Test("a turn's report is on its assistant message; no report is NULL, not 0; the sum survives reopening")
    func perTurn() async throws {
        let dir = directory()
        do {
            let store = SQLiteConversationStore(database: try GlassdDatabase(directory: dir))
            try await store.appendTurn(
                queryID: "a", question: "q1", answer: "a1", mode: .assistant, at: 1,
                usage: TokenUsage(promptTokens: 20, completionTokens: 4), newConversation: false)
            try await store.appendTurn(queryID: "b", question: "q2", answer: "a2", mode: .assistant, at: 2)
            try await store.appendTurn(
                queryID: "c", question: "q3", answer: "a3", mode: .assistant, at: 3,
                usage: TokenUsage(promptTokens: 30, completionTokens: 6), newConversation: false)
            #expect(try await store.tokensUsed() == 60)
        }
        #expect(try columns(dir) == [
            "user -1 -1", "assistant 20 4", "user -1 -1", "assistant -1 -1", "user -1 -1", "assistant 30 6",
        ])
        let reopened = SQLiteConversationStore(database: try GlassdDatabase(directory: dir))
        #expect(try await reopened.tokensUsed() == 60)
        try await reopened.clearHistory()
        #expect(try await reopened.tokensUsed() == 0)
    }

    @Test("a new conversation is the current one from its first turn; the old turns stay in the history")
    func newConversation() async throws {
        let database = try GlassdDatabase(directory: directory())
        let store = SQLiteConversationStore(database: database)
        try await store.appendTurn(
            queryID: "a", question: "q1", answer: "a1", mode: .assistant, at: 1,
            usage: TokenUsage(promptTokens: 50, completionTokens: 5), newConversation: false)
        try await store.appendTurn(
            queryID: "b", question: "q2", answer: "a2", mode: .assistant, at: 2,
            usage: TokenUsage(promptTokens: 7, completionTokens: 2), newConversation: true)
        #expect(try await store.tokensUsed() == 9)
        #expect(try await store.recentMessages(limit: 10).map(\.text) == ["q2", "a2"])
        try await store.appendTurn(
            queryID: "c", question: "q3", answer: "a3", mode: .assistant, at: 3,
            usage: TokenUsage(promptTokens: 12, completionTokens: 3), newConversation: false)
        #expect(try await store.tokensUsed() == 24)
        #expect(try await store.recentMessages(limit: 10).map(\.text) == ["q2", "a2", "q3", "a3"])
        #expect(try await HistoryArchive(database: database).recent(limit: 10).map(\.text) == [
            "q1", "a1", "q2", "a2", "q3", "a3",
        ])
    }

    @Test("after an import (past conversations with higher ids) a new conversation is still the current one")
    func afterImport() async throws {
        let dir = directory()
        let database = try GlassdDatabase(directory: dir)
        let store = SQLiteConversationStore(database: database)
        try await store.appendTurn(
            queryID: "a", question: "q1", answer: "a1", mode: .assistant, at: 10,
            usage: TokenUsage(promptTokens: 5, completionTokens: 5), newConversation: false)
        let file = dir + "/import.jsonl"
        try #"{"created_at":1,"query_id":"x","role":"user","text":"old","mode":"assistant","conversation":1}"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        let fd = open(file, O_RDONLY)
        defer { close(fd) }
        #expect(try await HistoryArchive(database: database).importMessages(from: fd) == 1)
        #expect(try await store.tokensUsed() == 10)
        try await store.appendTurn(
            queryID: "b", question: "q2", answer: "a2", mode: .assistant, at: 20,
            usage: TokenUsage(promptTokens: 1, completionTokens: 1), newConversation: true)
        #expect(try await store.recentMessages(limit: 10).map(\.text) == ["q2", "a2"])
        #expect(try await store.tokensUsed() == 2)
    }
}
