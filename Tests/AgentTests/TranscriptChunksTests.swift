// SPDX-License-Identifier: GPL-2.0-or-later
import Agent
import Concurrency
import Foundation
import Testing
import TestSupport

/// Chunks made as TEN's message collector makes them: JSON → UTF-8 → base64, cut into slices so
/// that each `id|index|total|slice` is at most `limit` bytes.
enum Chunker {
    static func chunks(_ json: String, id: String = "a1b2c3d4", limit: Int = 1024, unknownTotal: Bool = false)
        -> [String]
    {
        let base64 = Data(json.utf8).base64EncodedString()
        // Room for the header with a 4-digit index and total: a slice never pushes it over.
        let slice = limit - (id.utf8.count + 3 + 4 + 4)
        var slices: [Substring] = []
        var rest = Substring(base64)
        repeat {
            slices.append(rest.prefix(slice))
            rest = rest.dropFirst(slice)
        } while !rest.isEmpty
        return slices.enumerated().map { i, s in
            "\(id)|\(i + 1)|\(unknownTotal ? "???" : String(slices.count))|\(s)"
        }
    }

    static func transcript(_ text: String, final: Bool = true, ts: Int = 1_750_000_000_000) -> String {
        #"{"is_final":\#(final),"stream_id":0,"message_id":"a1b2c3d4","data_type":"transcribe","text_ts":\#(ts),"text":"\#(text)","role":"assistant"}"#
    }
}

/// Instants of a clock nobody advances: tests name the time they mean.
enum Time {
    static let origin = ManualClock().now
    static func at(_ ms: Int) -> ManualClock.Instant { origin.advanced(by: .milliseconds(ms)) }
}

@Suite("Transcript chunks", .timeLimit(.minutes(5)))
struct TranscriptChunksTests {
    private let long = Chunker.transcript(String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 60))

    private func feed(_ parts: [String], into chunks: inout TranscriptChunks<ManualClock>, at ms: Int = 0) -> [[UInt8]]
    {
        parts.compactMap { chunks.add($0, at: Time.at(ms)) }
    }

    @Test("chunks are at most 1024 bytes; in order they give back the JSON once, on the last part")
    func inOrder() throws {
        let parts = Chunker.chunks(long)
        #expect(parts.count == 4)
        #expect(parts.allSatisfy { $0.utf8.count <= 1024 })
        var chunks = TranscriptChunks<ManualClock>()
        for part in parts.dropLast() { #expect(chunks.add(part, at: Time.at(0)) == nil) }
        #expect(chunks.pending == 1)
        let last = chunks.add(parts.last!, at: Time.at(120))
        let whole = try #require(last)
        #expect(whole == Array(long.utf8))
        #expect(chunks.pending == 0 && chunks.dropped == 0)
    }

    @Test("any order, duplicates ignored, late duplicates do not repeat the message")
    func shuffledAndDuplicated() throws {
        let parts = Chunker.chunks(long)
        var generator = SplitMix64(seed: 7)
        for _ in 0..<20 {
            var chunks = TranscriptChunks<ManualClock>()
            let shuffled = (parts + parts.prefix(2)).shuffled(using: &generator)
            #expect(feed(shuffled + parts, into: &chunks) == [Array(long.utf8)])
            #expect(chunks.dropped == 0 && chunks.pending == 0)
        }
    }

    @Test("a single part, and two messages interleaved")
    func interleaved() {
        let a = Chunker.chunks(long, id: "aaaaaaaa")
        let b = Chunker.chunks(Chunker.transcript("short"), id: "bbbbbbbb")
        #expect(b.count == 1)
        var chunks = TranscriptChunks<ManualClock>()
        let out = feed([a[0], a[1], b[0], a[2], a[3]], into: &chunks)
        #expect(out == [Array(Chunker.transcript("short").utf8), Array(long.utf8)])
    }

    @Test("a message incomplete 5 s after its first part is given up")
    func expiry() {
        let parts = Chunker.chunks(long)
        var chunks = TranscriptChunks<ManualClock>()
        #expect(feed(Array(parts.prefix(3)), into: &chunks, at: 0).isEmpty)
        #expect(chunks.add(parts[3], at: Time.at(5000)) == nil)  // too late: it starts a new message
        #expect(chunks.discarded == 1)
        #expect(chunks.pending == 1)
        chunks.expire(at: Time.at(9999))
        #expect(chunks.pending == 1)
        chunks.expire(at: Time.at(10_000))
        #expect(chunks.pending == 0 && chunks.discarded == 2)

        // Just in time.
        var onTime = TranscriptChunks<ManualClock>()
        _ = feed(Array(parts.prefix(3)), into: &onTime, at: 0)
        #expect(onTime.add(parts[3], at: Time.at(4999)) == Array(long.utf8))
    }

    @Test("??? parts are kept; the message completes when a part with its total has come")
    func unknownTotal() {
        let unknown = Chunker.chunks(long, unknownTotal: true)
        let known = Chunker.chunks(long)
        var chunks = TranscriptChunks<ManualClock>()
        #expect(feed(unknown, into: &chunks).isEmpty)  // all there, but nobody said it is all
        #expect(chunks.add(known[1], at: Time.at(40)) == Array(long.utf8))

        var lastKnown = TranscriptChunks<ManualClock>()
        #expect(feed(Array(unknown.prefix(3)) + [known[3]], into: &lastKnown) == [Array(long.utf8)])

        // A known total that is too small for parts already kept: they are dropped.
        var conflicting = TranscriptChunks<ManualClock>()
        _ = feed(["m|5|???|QUJD"], into: &conflicting)
        #expect(conflicting.add("m|1|2|QUJD", at: Time.at(0)) == nil)
        #expect(conflicting.dropped == 1)
        #expect(conflicting.add("m|2|3|QUJD", at: Time.at(0)) == nil)  // disagrees with 2
        #expect(conflicting.dropped == 2)
        #expect(conflicting.add("m|2|2|REVG", at: Time.at(0)) == Array("ABCDEF".utf8))
    }

    @Test(
        "parts that do not parse are dropped and counted",
        arguments: [
            "", "no bars at all", "a|1|1", "a|1|1|QUJD|extra", "|1|1|QUJD", "a|0|1|QUJD", "a|2|1|QUJD", "a|1|0|QUJD",
            "a|x|1|QUJD", "a|-1|1|QUJD", "a|+1|1|QUJD", "a| 1|1|QUJD", "a|1|1001|QUJD", "a|1001|???|QUJD",
            "a|1|99999999999999999999|QUJD", "a|1|1|QU JD", "a|1|1|QUJD!", "a|1|1|é",
            String(repeating: "x", count: 65) + "|1|1|QUJD",
        ])
    func garbage(_ part: String) {
        var chunks = TranscriptChunks<ManualClock>()
        #expect(chunks.add(part, at: Time.at(0)) == nil)
        #expect(chunks.dropped == 1)
        #expect(chunks.pending == 0)
    }

    @Test("valid characters that are not base64 once joined: the message is given up")
    func badJoined() {
        var chunks = TranscriptChunks<ManualClock>()
        #expect(chunks.add("m|1|1|QUJ", at: Time.at(0)) == nil)
        #expect(chunks.discarded == 1 && chunks.pending == 0)
    }

    @Test("memory is bounded: at most 64 messages in flight, 1 MiB each")
    func bounded() {
        var chunks = TranscriptChunks<ManualClock>()
        for i in 0..<200 { _ = chunks.add("m\(i)|1|2|QUJD", at: Time.at(i)) }
        #expect(chunks.pending == 64)
        #expect(chunks.discarded == 136)
        // The newest survive.
        #expect(chunks.add("m199|2|2|REVG", at: Time.at(300)) == Array("ABCDEF".utf8))

        var big = TranscriptChunks<ManualClock>()
        let slice = String(repeating: "A", count: 1500)
        for i in 1...1000 { _ = big.add("big|\(i)|1000|\(slice)", at: Time.at(0)) }
        #expect(big.discarded == 1)
        #expect(big.pending <= 1)
    }
}
