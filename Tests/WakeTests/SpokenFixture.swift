// SPDX-License-Identifier: GPL-2.0-or-later
import Audio
import Foundation
import TestSupport

/// Speech for the spotter's tests: espeak-ng says a text (no recording is kept in the tree), at
/// 16 kHz 16-bit mono.
enum SpokenFixture {
    struct Failure: Error, CustomStringConvertible { let description: String }

    /// `text` in `voice`, with `pad` seconds of silence around it.
    static func say(_ text: String, voice: String = "en-us+klatt", speed: Int = 140, pad: Double = 0.5) async throws -> [Int16] {
        try await onOwnThread { try sayBlocking(text, voice: voice, speed: speed, pad: pad) }
    }

    private static func sayBlocking(_ text: String, voice: String, speed: Int, pad: Double) throws -> [Int16] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("wake-\(UUID().uuidString).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let process = Process()
        // Under timeout(1): a stuck espeak-ng fails the test instead of hanging it.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["--kill-after=5", "120", "/usr/bin/espeak-ng", "-v", voice, "-s", String(speed), "-w", path, text]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Failure(description: "espeak-ng failed on \(text)") }
        let (samples, rate) = try WAV.decode(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        let silence = [Int16](repeating: 0, count: Int(pad * 16_000))
        return silence + (try PCMConverter.resample(samples, from: rate, to: 16_000)) + silence
    }
}
