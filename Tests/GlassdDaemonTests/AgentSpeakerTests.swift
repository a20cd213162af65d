// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
@testable import GlassdDaemon
import Logging
import Testing

@Suite("The agent's speech on this computer")
struct AgentSpeakerTests {
    @Test("PCM reaches the player in order, started with the rate and channels; a new format starts a new player")
    func playsThroughThePlayer() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("speaker-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A player that hands what it is given to a FIFO named for its format, which the test reads to its end.
        let player = directory + "/player"
        try "#!/bin/sh\nexec cat > \"\(directory)/played-$1-$2\"\n".write(toFile: player, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: player)
        let first = directory + "/played-16000-1"
        let second = directory + "/played-24000-2"
        #expect(mkfifo(first, 0o600) == 0 && mkfifo(second, 0o600) == 0)
        let speaker = AgentSpeaker(command: [player], logger: Logger(label: "test"))
        speaker.play([1, 2, 3, 4], sampleRate: 16_000, channels: 1)
        speaker.play([5, 6], sampleRate: 16_000, channels: 1)
        speaker.play([7, 8], sampleRate: 24_000, channels: 2)
        // Ignored: nothing to play, or a format no player takes.
        speaker.play([], sampleRate: 16_000, channels: 1)
        speaker.play([9, 9], sampleRate: 1, channels: 1)
        speaker.finish()
        #expect(await Self.readToEnd(first) == Data([1, 2, 3, 4, 5, 6]))
        #expect(await Self.readToEnd(second) == Data([7, 8]))
    }

    /// A FIFO's bytes until its writer closes it, read on a thread of its own (the read blocks).
    private static func readToEnd(_ path: String) async -> Data? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: FileHandle(forReadingAtPath: path).flatMap { try? $0.readToEnd() } ?? Data())
            }
        }
    }
}
