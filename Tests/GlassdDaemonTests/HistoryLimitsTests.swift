// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Storage
import Testing
import TestSupport

/// A caller that never reads its export, or imports without end, cannot take glassd's database.
@Suite("History export and import limits", .timeLimit(.minutes(5)))
struct HistoryLimitsTests {
    private func directory() -> String {
        NSTemporaryDirectory() + "glassd-limits-\(UUID().uuidString)"
    }

    /// An archive whose history is larger than a pipe holds (about 400 KiB of JSON Lines).
    private func bigArchive(stallLimit: Duration = HistoryArchive.defaultExportStallLimit) async throws -> HistoryArchive {
        let database = try GlassdDatabase(directory: directory())
        let text = String(repeating: "x", count: 300)
        let lines = (0..<1200).map { i in
            #"{"created_at":\#(i),"query_id":"q\#(i)","role":"user","text":"\#(text)","mode":"assistant","conversation":1}"#
        }
        let path = directory() + ".jsonl"
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        let archive = HistoryArchive(database: database, exportStallLimit: stallLimit)
        #expect(try await archive.importMessages(from: fd) == 1200)
        return archive
    }

    /// A pipe whose read end nobody reads; both ends closed after `body`.
    private func unreadPipe<R>(_ body: (Int32) async throws -> R) async throws -> R {
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        return try await body(ends[1])
    }

    @Test("an export whose reader takes nothing stops after its stall limit with `stalled`, and frees its slot")
    func stalledExport() async throws {
        let archive = try await bigArchive(stallLimit: .milliseconds(300))
        try await unreadPipe { fd in
            await #expect(throws: HistoryError.stalled("The reader took nothing for 0.3 seconds: the export was stopped.")) {
                try await archive.export(to: fd)
            }
        }
        // The slot is free again: a file export runs whole.
        let path = directory() + ".out"
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        try await archive.export(to: fd)
        #expect(try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").count == 1200)
    }

    @Test("while one export waits for its reader, another is refused with `busy` at once")
    func oneExportAtATime() async throws {
        let archive = try await bigArchive()
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let writeEnd = ends[1]
        let first = Task { try await archive.export(to: writeEnd) }
        // The first export's first lines in the pipe: it holds the slot (a bounded wait).
        try #require(await readable(ends[0], within: 60_000), "the first export wrote nothing")
        try await unreadPipe { other in
            await #expect(throws: HistoryError.busy("Another export of the history is running; try again when it has ended.")) {
                try await archive.export(to: other)
            }
        }
        first.cancel()
        await #expect(throws: HistoryError.badDescriptor("The caller left.")) { try await first.value }
    }

    @Test("an import larger than the limit is refused whole, nothing kept")
    func importLimit() async throws {
        let archive = HistoryArchive(database: try GlassdDatabase(directory: directory()), importLimit: 4096)
        let line = #"{"created_at":1,"query_id":"q","role":"user","text":"t","mode":"assistant","conversation":1}"#
        let path = directory() + ".jsonl"
        try Data(Array(repeating: line, count: 100).joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        await #expect(
            throws: HistoryError.tooLarge(
                "The file is larger than 4096 bytes, more than glassd imports at once; split it (by lines) and import the parts. Nothing was imported.")
        ) { try await archive.importMessages(from: fd) }
        #expect(try await archive.recent(limit: 10).isEmpty)
    }
}
