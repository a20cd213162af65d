// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses
import Foundation

/// The raw-REPL commands that put the scripts on the device. Contents travel as base64 inside
/// bytes literals, so any byte survives and nothing needs quoting; every chunk command names its
/// offset, so repeating one (after a lost reply) writes the same bytes again; each file is written
/// under a temporary name and renamed only when all are complete, main.py last, so an interrupted
/// upload never leaves a half file that runs.
public enum ScriptUpload {
    public static let temporarySuffix = ".tmp"
    static let handle = "_gu"

    /// The commands, in order; each fits `maxCommandBytes` (code plus Ctrl-D).
    public static func commands(_ scripts: DeviceScripts, maxCommandBytes: Int) -> [String] {
        let chunkPrefix = "\(handle).seek(0000000);\(handle).write(binascii.a2b_base64(b'"
        let chunkSuffix = "'))"
        let room = maxCommandBytes - 1 - chunkPrefix.utf8.count - chunkSuffix.utf8.count
        // Base64 comes in groups of 4 characters for 3 bytes.
        let bytesPerChunk = max(3, room / 4 * 3)
        var commands: [String] = []
        for file in scripts.files {
            let bytes = scripts.uploaded(file)
            commands.append("import binascii\n\(handle)=open('\(file.name)\(temporarySuffix)','wb')")
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + bytesPerChunk, bytes.count)
                commands.append(
                    "\(handle).seek(\(offset));\(handle).write(binascii.a2b_base64(b'\(Data(bytes[offset..<end]).base64EncodedString())'))")
                offset = end
            }
            commands.append("\(handle).close()\ndel \(handle)")
        }
        commands.append(finish(scripts))
        return commands
    }

    /// All files complete: rename them into place (main.py last), and leave the welcome marker.
    static func finish(_ scripts: DeviceScripts) -> String {
        var finish = ["import os"]
        for file in scripts.files {
            finish.append("os.rename('\(file.name)\(temporarySuffix)','\(file.name)')")
        }
        finish.append("open('\(DeviceScripts.freshMarker)','w').close()")
        return finish.joined(separator: "\n")
    }
}
