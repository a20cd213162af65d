// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// The first of `names` installed in PATH, as a full path: the host's audio tools (PipeWire's,
/// PulseAudio's, ALSA's), whichever the machine has.
func installedTool(_ names: String...) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for name in names {
        for directory in path.split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
            return "\(directory)/\(name)"
        }
    }
    return nil
}
