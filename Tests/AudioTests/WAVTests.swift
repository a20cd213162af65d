// SPDX-License-Identifier: GPL-2.0-or-later
import Audio
import Foundation
import Testing
import TestSupport

@Suite("WAV encoder", .timeLimit(.minutes(2)))
struct WAVTests {
    @Test("the 44-byte header, byte for byte, then little-endian samples")
    func header() {
        let wav = WAV.encode([0, 1, -1, .max, .min], sampleRate: 16_000)
        let expected: [UInt8] =
            Array("RIFF".utf8) + [46, 0, 0, 0]  // 36 + data
            + Array("WAVE".utf8) + Array("fmt ".utf8) + [16, 0, 0, 0]
            + [1, 0]  // PCM
            + [1, 0]  // mono
            + [0x80, 0x3E, 0, 0]  // 16000 Hz
            + [0x00, 0x7D, 0, 0]  // 32000 bytes/s
            + [2, 0]  // block align
            + [16, 0]  // bits per sample
            + Array("data".utf8) + [10, 0, 0, 0]
            + [0, 0, 1, 0, 0xFF, 0xFF, 0xFF, 0x7F, 0x00, 0x80]
        #expect(wav == expected)
    }

    @Test("no samples: a valid empty file")
    func empty() {
        let wav = WAV.encode([], sampleRate: 16_000)
        #expect(wav.count == 44)
        #expect(Array(wav[4..<8]) == [36, 0, 0, 0])
        #expect(Array(wav[40..<44]) == [0, 0, 0, 0])
    }

    @Test("Python's wave module reads the frames back", .enabled(if: Self.python != nil))
    func pythonReadsBack() async throws {
        let samples = (0..<1000).map { Int16(truncatingIfNeeded: $0 &* 977) }
        let path = NSTemporaryDirectory() + "glassd-wav-\(getpid()).wav"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(WAV.encode(samples, sampleRate: 16_000)).write(to: URL(fileURLWithPath: path))
        let script = """
            import sys, wave
            w = wave.open(sys.argv[1])
            print(w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes(), w.getcomptype())
            print(w.readframes(w.getnframes()).hex())
            """
        let python = try #require(Self.python)
        let output = try await onOwnThread {
            let process = Process()
            // Under timeout(1): a stuck interpreter fails the test instead of hanging it.
            process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
            process.arguments = ["--kill-after=5", "120", python, "-c", script, path]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return output
        }
        let lines = output.split(separator: "\n")
        #expect(lines.first == "1 2 16000 1000 NONE")
        let hex = samples.map { s in
            let u = UInt16(bitPattern: s)
            return String(format: "%02x%02x", u & 0xFF, u >> 8)
        }.joined()
        #expect(lines.last.map(String.init) == hex)
    }

    static let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
}
