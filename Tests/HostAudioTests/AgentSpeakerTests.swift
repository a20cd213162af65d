// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
@testable import HostAudio
import Logging
import Testing

@Suite("The agent's speech on this computer", .timeLimit(.minutes(2)))
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

    @Test("a player that stalls does not make speech wait without end: the oldest is dropped, counted, the newest plays")
    func stalledPlayerIsBounded() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("speaker-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A player that reads nothing until the test writes a line to "go": the pipe fills and the
        // writer blocks, as with a stuck sound server.
        let player = directory + "/player"
        try "#!/bin/sh\nread line < \"\(directory)/go\"\nexec cat > \"\(directory)/played\"\n"
            .write(toFile: player, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: player)
        #expect(mkfifo(directory + "/go", 0o600) == 0 && mkfifo(directory + "/played", 0o600) == 0)
        let speaker = AgentSpeaker(command: [player], logger: Logger(label: "test"), maxPendingChunks: 32, maxPendingBytes: 1 << 30)
        let chunk = 1024
        let total = 5_000
        for i in 0..<total {
            speaker.play([UInt8](repeating: UInt8(truncatingIfNeeded: i), count: chunk - 2) + [UInt8(i >> 8), UInt8(i & 0xFF)], sampleRate: 16_000, channels: 1)
            #expect(speaker.backlog.chunks <= 32)
        }
        let backlog = speaker.backlog
        // The writer holds at most one chunk, and the pipe (64 KiB) at most 64 more, besides the 32 waiting.
        #expect(backlog.dropped >= total - 32 - 1 - 64 - 1)
        speaker.finish()
        async let played = Self.readToEnd(directory + "/played")
        // Opening the FIFO blocks until the player opens it: on a thread of its own.
        Thread.detachNewThread { try? "go\n".write(toFile: directory + "/go", atomically: false, encoding: .utf8) }
        let bytes = [UInt8](await played ?? Data())
        #expect(bytes.count % chunk == 0 && bytes.count <= (32 + 1 + 65) * chunk)
        // In order, ending with the last one played.
        let indices = stride(from: 0, to: bytes.count, by: chunk).map { Int(bytes[$0 + chunk - 2]) << 8 | Int(bytes[$0 + chunk - 1]) }
        #expect(indices == indices.sorted() && indices.last == total - 1)
        #expect(indices.count + speaker.backlog.dropped == total)
    }

    /// A FIFO's bytes until its writer closes it, read on a thread of its own (the read blocks).
    private static func readToEnd(_ path: String) async -> Data {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: readFIFO(path, waitingAtMost: .seconds(60))) }
        }
    }

    /// Blocking: the FIFO's bytes until its writer closes it, or what came within `limit` (a bound
    /// against a hang: the expectation on the bytes then fails).
    private static func readFIFO(_ path: String, waitingAtMost limit: Duration) -> Data {
        // Non-blocking open: no wait for a writer here. Poll then waits for one to connect and write
        // or close (before any writer came it reports nothing, not a hang-up).
        let fd = open(path, O_RDONLY | O_NONBLOCK)
        guard fd >= 0 else { return Data() }
        defer { close(fd) }
        let deadline = ContinuousClock.now + limit
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let left = (deadline - ContinuousClock.now).components
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, Int32(clamping: max(0, left.seconds * 1000 + left.attoseconds / 1_000_000_000_000_000)))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return data }
            let n = read(fd, &buffer, buffer.count)
            if n > 0 {
                data.append(contentsOf: buffer[..<n])
            } else if n == 0 || errno != EAGAIN {
                return data
            }
        }
    }
}
