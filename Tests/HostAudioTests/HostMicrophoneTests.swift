// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
@testable import HostAudio
import Glibc
import Logging
import Product
import Testing

/// The host's recorder as a child process (swift-subprocess), with stand-in recorders.
@Suite("The host's microphone", .timeLimit(.minutes(2)))
struct HostMicrophoneTests {
    private static func script(_ body: String) throws -> (directory: String, path: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mic-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/recorder"
        try "#!/bin/sh\n\(body)\n".write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        return (directory, path)
    }

    @Test("its stdout's s16le becomes samples; a recorder that ends is reported with its status")
    func samplesThenEnd() async throws {
        let (directory, recorder) = try Self.script(#"printf '\001\000\377\377\002'; printf '\000'; exit 3"#)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var seen: [WakeWatch.HostAudio] = []
        var samples: [Int16] = []
        for await item in HostMicrophone.audio(logger: Logger(label: "test"), command: { [recorder] }) {
            if case .samples(let some) = item { samples += some } else { seen.append(item) }
            if case .stopped = item { break }
        }
        #expect(seen == [.started, .stopped("The microphone's recorder ended (status 3).")])
        #expect(samples == [1, -1, 2])
    }

    @Test("a recorder that cannot start is reported so")
    func cannotStart() async throws {
        for await item in HostMicrophone.audio(logger: Logger(label: "test"), command: { ["/nonexistent/recorder"] }) {
            guard case .stopped(let why) = item else {
                Issue.record("\(item) before the failure")
                break
            }
            #expect(why.hasPrefix("The microphone's recorder /nonexistent/recorder could not start: "), "\(why)")
            break
        }
    }

    @Test("the consumer stopping ends the recorder (SIGTERM): the descriptor it held closes")
    func consumerStopsIt() async throws {
        let (directory, recorder) = try Self.script(#"exec 3>"$(dirname "$0")/held"; printf '\001\000'; exec sleep 600"#)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(mkfifo(directory + "/held", 0o600) == 0)
        // Opened before the recorder starts (non-blocking, so no wait for a writer here).
        let fd = open(directory + "/held", O_RDONLY | O_NONBLOCK)
        #expect(fd >= 0)
        defer { close(fd) }
        for await item in HostMicrophone.audio(logger: Logger(label: "test"), command: { [recorder] }) {
            if case .samples = item { break }  // it runs: stop listening
        }
        #expect(await hangUp(fd, waitingAtMost: .seconds(60)), "the recorder still holds its descriptor")
    }
}
