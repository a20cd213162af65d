// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Glibc

/// Whether this process can reach the user's audio at all: the audio server's socket
/// (PipeWire's, PulseAudio's) or an ALSA device. glassd's hardened system unit has neither
/// (no XDG_RUNTIME_DIR, ProtectHome, PrivateDevices, DevicePolicy=closed), so a recorder or
/// player started there can only fail; this says so once at the start instead.
public struct HostAudioAccess: Sendable {
    public enum Direction: Sendable {
        case capture, playback
        /// ALSA's device node suffix: pcmC0D0c records, pcmC0D0p plays.
        var suffix: Character { self == .capture ? "c" : "p" }
    }

    var environment: [String: String]
    /// Where `snd/pcmC*D*c` are looked for: /dev, or `GLASSD_AUDIO_DEV_DIR` (tests).
    var devDirectory: String

    static let devOverrideVariable = "GLASSD_AUDIO_DEV_DIR"

    public static var current: HostAudioAccess {
        let environment = ProcessInfo.processInfo.environment
        return HostAudioAccess(environment: environment, devDirectory: environment[devOverrideVariable] ?? "/dev")
    }

    /// The error Manager1.Wake and the log give when the host's microphone cannot be reached.
    public static let microphoneUnreachable =
        "The host's microphone is not reachable from glassd's system service (no audio server socket, no sound device): "
        + "use source = \"glasses\", or run glassd with the wake phrase in the user's session."

    /// Said once in the log when [agent] speak cannot play.
    public static let speakerUnreachable =
        "[agent] speak is on, but the host's audio is not reachable from glassd's system service (no audio server socket, "
        + "no sound device): the agent's speech is not played; run glassd in the user's session to hear it."

    public func reachable(_ direction: Direction) -> Bool {
        serverSockets.contains(where: Self.connects) || hasDevice(direction)
    }

    /// PULSE_SERVER's local socket, PipeWire's and PulseAudio's in the runtime directories.
    /// A PULSE_SERVER that names a host over the network is taken as reachable: it is not checked.
    private var serverSockets: [String] {
        var paths: [String] = []
        if let server = environment["PULSE_SERVER"], !server.isEmpty {
            let path = server.hasPrefix("unix:") ? String(server.dropFirst(5)) : server
            if !path.hasPrefix("/") { return ["tcp"] }
            paths.append(path)
        }
        for variable in ["PIPEWIRE_RUNTIME_DIR", "XDG_RUNTIME_DIR"] {
            guard let directory = environment[variable], directory.hasPrefix("/") else { continue }
            paths += [directory + "/pipewire-0", directory + "/pulse/native"]
        }
        return paths
    }

    private static func connects(_ path: String) -> Bool {
        if path == "tcp" { return true }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
    }

    /// An ALSA device of that direction that opens (closed again at once).
    private func hasDevice(_ direction: Direction) -> Bool {
        let directory = devDirectory + "/snd"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return false }
        return names.contains { name in
            guard name.hasPrefix("pcmC"), name.last == direction.suffix else { return false }
            let fd = open(directory + "/" + name, (direction == .capture ? O_RDONLY : O_WRONLY) | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { return false }
            close(fd)
            return true
        }
    }
}
