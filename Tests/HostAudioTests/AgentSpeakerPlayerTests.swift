// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
@testable import HostAudio
import Glibc
import Logging
import Testing

/// The player's life under swift-subprocess: it ends with the speaker, and one that will not exit
/// after its speech is ended.
@Suite("The agent's speech player", .timeLimit(.minutes(2)))
struct AgentSpeakerPlayerTests {
    /// A stand-in player that holds `held-<rate>` (a FIFO, one per rate given) open while it
    /// lives, after `body`; the FIFOs' read ends, opened before it starts.
    private static func player(_ body: String, rates: [Int]) throws -> (directory: String, player: String, held: [Int32]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("player-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let player = directory + "/player"
        try "#!/bin/sh\nexec 3>\"\(directory)/held-$1\"\n\(body)\n".write(toFile: player, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: player)
        let held = rates.map { rate in
            #expect(mkfifo(directory + "/held-\(rate)", 0o600) == 0)
            // Non-blocking: no wait for the player to open it.
            return open(directory + "/held-\(rate)", O_RDONLY | O_NONBLOCK)
        }
        #expect(held.allSatisfy { $0 >= 0 })
        return (directory, player, held)
    }

    @Test("a speaker released mid-speech: its player gets the speech, then the end of its input, and exits")
    func releasedSpeaker() async throws {
        let (directory, player, held) = try Self.player("exec cat > \"$(dirname \"$0\")/played\"", rates: [16_000])
        defer {
            for fd in held { close(fd) }
            try? FileManager.default.removeItem(atPath: directory)
        }
        do {
            let speaker = AgentSpeaker(command: [player], logger: Logger(label: "test"))
            speaker.play([1, 2, 3, 4], sampleRate: 16_000, channels: 1)
        }
        #expect(await hangUp(held[0], waitingAtMost: .seconds(60)), "the player did not exit")
        #expect(FileManager.default.contents(atPath: directory + "/played") == Data([1, 2, 3, 4]))
    }

    @Test("a player that does not exit after its speech is ended (SIGTERM), and the next format still plays")
    func stuckPlayer() async throws {
        // Reads its speech to the end, then stays; the second format's player is the same script.
        let (directory, player, held) = try Self.player(
            "cat > \"$(dirname \"$0\")/played-$1\"\nexec sleep 600", rates: [16_000, 24_000])
        defer {
            for fd in held { close(fd) }
            try? FileManager.default.removeItem(atPath: directory)
        }
        let speaker = AgentSpeaker(command: [player], logger: Logger(label: "test"), exitTimeout: .milliseconds(200))
        speaker.play([1, 2], sampleRate: 16_000, channels: 1)
        speaker.play([3, 4], sampleRate: 24_000, channels: 1)
        speaker.finish()
        // Each player came and went, the second after the first.
        #expect(await hangUp(held[0], waitingAtMost: .seconds(60)), "the first stuck player was not ended")
        #expect(await hangUp(held[1], waitingAtMost: .seconds(60)), "the second stuck player was not ended")
        #expect(FileManager.default.contents(atPath: directory + "/played-16000") == Data([1, 2]))
        #expect(FileManager.default.contents(atPath: directory + "/played-24000") == Data([3, 4]))
    }
}
