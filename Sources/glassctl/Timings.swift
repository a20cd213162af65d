// SPDX-License-Identifier: GPL-2.0-or-later
import ArgumentParser
import DBusKit
import Foundation
import GlassdAPI
import GlassdContract

/// The latest turns' timelines (Manager1.TurnTimings), as `glassctl history --timings` prints them
/// and `glassctl stats` sums them up.
struct TurnTiming: Encodable {
    var query_id: String
    var time_ms: Int64
    /// Stage name → milliseconds from the turn's start.
    var stages_ms: [String: Double]

    /// The stages in the order a turn goes through them.
    static let stages = ["speech_end", "audio_sent", "transcript", "first_token", "first_word", "last_word", "first_audio"]

    static func fetch(_ client: Client, limit: UInt32) async throws -> [TurnTiming] {
        let rows = try await client.manager.turnTimings(limit: limit)
        return (rows.elements ?? []).compactMap { row in
            guard let f = row.elements, f.count == 3, let id = f[0].string, case .uint64(let at) = f[1] else { return nil }
            var stages: [String: Double] = [:]
            for (name, value) in f[2].stringKeyed ?? [:] {
                if case .uint64(let micros) = value.unwrapped { stages[name] = Double(micros) / 1000 }
            }
            return TurnTiming(query_id: id, time_ms: Int64(clamping: at), stages_ms: stages)
        }
    }

    /// A table: a row per turn, a column per stage (ms from the turn's start; "-" for one it did not reach).
    static func table(_ turns: [TurnTiming]) -> String {
        let columns = stages.filter { stage in turns.contains { $0.stages_ms[stage] != nil } }
        var lines = [(["query"] + columns).map(pad).joined(separator: " ")]
        for turn in turns {
            let cells = columns.map { turn.stages_ms[$0].map { String(format: "%.0f", $0) } ?? "-" }
            lines.append(([String(turn.query_id.suffix(12))] + cells).map(pad).joined(separator: " "))
        }
        return lines.joined(separator: "\n")
    }

    private static func pad(_ s: String) -> String { s.count >= 12 ? s : String(repeating: " ", count: 12 - s.count) + s }
}

struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Where the latest turns' time went: p50 and p95 of each stage, in ms from the turn's start.")

    @OptionGroup var options: GlobalOptions

    @Option(name: .short, help: "How many of the latest turns.")
    var n: UInt32 = 50

    struct Stage: Encodable {
        var stage: String
        var turns: Int
        var p50_ms: Double
        var p95_ms: Double
    }

    func run() async throws {
        try await reportingErrors {
            let turns = try await TurnTiming.fetch(try await options.connect(), limit: n)
            let stages = TurnTiming.stages.compactMap { name -> Stage? in
                let values = turns.compactMap { $0.stages_ms[name] }.sorted()
                guard !values.isEmpty else { return nil }
                return Stage(stage: name, turns: values.count, p50_ms: Self.percentile(values, 0.5), p95_ms: Self.percentile(values, 0.95))
            }
            if options.json { return try printJSON(stages) }
            guard !stages.isEmpty else { return print("No turns are recorded yet.") }
            print("stage         turns    p50 ms    p95 ms")
            for s in stages {
                print(
                    s.stage.padding(toLength: 12, withPad: " ", startingAt: 0)
                        + String(format: " %6d  %8.0f  %8.0f", s.turns, s.p50_ms, s.p95_ms))
            }
        }
    }

    /// The nearest-rank percentile of sorted `values`.
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        values[min(values.count - 1, max(0, Int((p * Double(values.count)).rounded(.up)) - 1))]
    }
}
