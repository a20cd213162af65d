// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Where the host's audio tools (PipeWire's, PulseAudio's, ALSA's) are looked for: the system's
/// own directories, never `PATH`. A daemon's PATH is whatever started it set, and a relative
/// entry (".", "bin", an empty one) would run a program from the working directory.
enum AudioTools {
    static let systemDirectories = ["/usr/local/bin", "/usr/bin", "/bin"]

    /// `GLASSD_AUDIO_TOOLS_DIR` replaces them (the tests' stand-in recorders and players): set
    /// only by whoever starts glassd, as its config is, and absolute directories only.
    static let overrideVariable = "GLASSD_AUDIO_TOOLS_DIR"

    static func directories(_ environment: [String: String]) -> [String] {
        guard let override = environment[overrideVariable] else { return systemDirectories }
        return override.split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
    }
}

/// The first of `names` installed in the audio tools' directories, as a full path.
func installedTool(_ names: String..., environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
    let directories = AudioTools.directories(environment)
    for name in names {
        for directory in directories where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
            return "\(directory)/\(name)"
        }
    }
    return nil
}
