// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
@testable import HostAudio
import Glibc
import Testing

/// What glassd takes for "the user's audio is reachable", staged in scratch directories.
@Suite("The host's audio: reachable or not, and where its tools are", .timeLimit(.minutes(5)))
struct HostAudioAccessTests {
    private func scratch() throws -> String {
        let path = NSTemporaryDirectory() + "glassd-audio-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path + "/snd", withIntermediateDirectories: true)
        return path
    }

    /// A unix socket at `path`, listening until `body` ends, or (`listening` false) left behind
    /// by a server that is gone.
    private func withSocket<R>(at path: String, listening: Bool = true, _ body: () throws -> R) throws -> R {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0)
        if listening { try #require(listen(fd, 1) == 0) } else { close(fd) }
        defer { if listening { close(fd) } }
        return try body()
    }

    @Test("as under the hardened unit: no runtime directory, no sound devices: neither recording nor playing is reachable")
    func hardened() throws {
        let dev = try scratch()
        let access = HostAudioAccess(environment: ["PATH": "/usr/bin:/bin"], devDirectory: dev)
        #expect(!access.reachable(.capture))
        #expect(!access.reachable(.playback))
        // A runtime directory without a server, or a socket its server left behind, is no better.
        let runtime = try scratch()
        try withSocket(at: runtime + "/pipewire-0", listening: false) {
            #expect(!HostAudioAccess(environment: ["XDG_RUNTIME_DIR": runtime], devDirectory: dev).reachable(.capture))
        }
    }

    @Test("PipeWire's or PulseAudio's socket that answers, or PULSE_SERVER, makes both reachable")
    func audioServer() throws {
        let dev = try scratch()
        let runtime = try scratch()
        try withSocket(at: runtime + "/pipewire-0") {
            let access = HostAudioAccess(environment: ["XDG_RUNTIME_DIR": runtime], devDirectory: dev)
            #expect(access.reachable(.capture) && access.reachable(.playback))
        }
        try FileManager.default.createDirectory(atPath: runtime + "/pulse", withIntermediateDirectories: true)
        try withSocket(at: runtime + "/pulse/native") {
            #expect(HostAudioAccess(environment: ["XDG_RUNTIME_DIR": runtime], devDirectory: dev).reachable(.capture))
            #expect(HostAudioAccess(environment: ["PULSE_SERVER": "unix:" + runtime + "/pulse/native"], devDirectory: dev).reachable(.capture))
        }
        #expect(HostAudioAccess(environment: ["PULSE_SERVER": "tcp:192.0.2.1"], devDirectory: dev).reachable(.playback))
        #expect(!HostAudioAccess(environment: ["PULSE_SERVER": "unix:" + runtime + "/pulse/native"], devDirectory: dev).reachable(.capture))
    }

    @Test("an ALSA capture device that opens makes recording reachable, not playing; a playback one the other way round")
    func alsaDevices() throws {
        let dev = try scratch()
        #expect(FileManager.default.createFile(atPath: dev + "/snd/pcmC0D0c", contents: Data()))
        #expect(FileManager.default.createFile(atPath: dev + "/snd/controlC0", contents: Data()))
        let access = HostAudioAccess(environment: [:], devDirectory: dev)
        #expect(access.reachable(.capture))
        #expect(!access.reachable(.playback))
        #expect(FileManager.default.createFile(atPath: dev + "/snd/pcmC0D0p", contents: Data()))
        #expect(access.reachable(.playback))
    }

    @Test("audio tools are looked for in the system's directories, not PATH (relative entries included); the tests' override takes absolute directories only")
    func toolDirectories() throws {
        let bin = try scratch()
        let tool = "glassd-test-recorder-\(UUID().uuidString.prefix(8))"
        try "#!/bin/sh\n".write(toFile: bin + "/" + tool, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: bin + "/" + tool)
        #expect(installedTool(tool, environment: ["PATH": bin + ":.:bin:"]) == nil)
        #expect(installedTool("sh", environment: ["PATH": bin]) != nil, "sh is in /bin or /usr/bin")
        #expect(installedTool(tool, environment: [AudioTools.overrideVariable: bin]) == bin + "/" + tool)
        #expect(AudioTools.directories([AudioTools.overrideVariable: "bin:.:" + bin]) == [bin])
    }
}
