// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Foundation
import Testing

private let targets = [
    "data-channel", "repl-reply", "sse", "dfu-package", "jpeg", "config", "notify-rules", "icalendar", "dbus-message", "cbor", "smp-frame", "mcuboot-image",
]

/// The smoke run of Scripts/fuzz's targets that fits in CI: glassd-fuzz, built plainly, replays
/// every seed and inputs made from them (cut, flipped, spliced with random bytes) through each
/// parser. A trap, a hang past the time limit or a crash fails it.
@Suite("Fuzz targets: seeds and their mutations replayed", .timeLimit(.minutes(3)))
struct FuzzCorpusTests {
    private static var replayer: String { Paths.bin + "/glassd-fuzz" }

    /// 400 inputs from the seeds, the same every run.
    private static func mutations(of seeds: [[UInt8]], seed: UInt64) -> [[UInt8]] {
        var random = SplitMix64(seed: seed)
        return (0..<400).map { i in
            var bytes = seeds[i % seeds.count]
            switch random.next() % 4 {
            case 0: bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count + 1))))
            case 1:
                for _ in 0..<(1 + random.next() % 8) where !bytes.isEmpty {
                    bytes[Int(random.next() % UInt64(bytes.count))] ^= UInt8(truncatingIfNeeded: random.next())
                }
            case 2: bytes += (0..<(random.next() % 512)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            default: bytes = (0..<(random.next() % 300)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            }
            return bytes
        }
    }

    @Test("each target takes its seeds and 400 mutations of them", arguments: targets)
    func replay(target: String) async throws {
        let corpus = Paths.root + "/Tests/Fuzz/Corpus/" + target
        let seedFiles = try FileManager.default.contentsOfDirectory(atPath: corpus).sorted().map { corpus + "/" + $0 }
        #expect(!seedFiles.isEmpty)
        let seeds = try seedFiles.map { Array(try Data(contentsOf: URL(fileURLWithPath: $0))) }
        let dir = try Paths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var files = seedFiles
        for (i, input) in Self.mutations(of: seeds, seed: UInt64(target.utf8.count) &* 7919).enumerated() {
            let path = dir + "/\(i)"
            try Data(input).write(to: URL(fileURLWithPath: path))
            files.append(path)
        }
        let result = try await runCommand(Self.replayer, [target] + files)
        guard !result.ok else { return }
        // Name the input that crashed it, for a seed of its own once fixed.
        for file in files where !(try await runCommand(Self.replayer, [target, file])).ok {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            Issue.record("\(target) crashed on \(bytes.count) bytes: \(bytes.map { String(format: "%02x", $0) }.joined())")
            return
        }
        Issue.record("\(target) failed on the whole batch only: \(result.stderr.suffix(2000))")
    }

    @Test("Scripts/fuzz names the replayer's targets")
    func targetList() async throws {
        let list = try await runCommand(Paths.root + "/Scripts/fuzz", ["--list"])
        #expect(list.stdout.split(separator: "\n").map(String.init) == targets)
        let usage = try await runCommand(Self.replayer, [])
        #expect(usage.status == 2 && usage.stderr.contains(targets.joined(separator: ", ")), "\(usage.stderr)")
    }
}
