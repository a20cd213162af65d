// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Glasses
import LinkKit

/// Large scripts as binary on the data channel: the receiver (DeviceScripts/glassd_receiver.py)
/// defined once over the REPL, then started for each file with that file's write, the bytes sent
/// windowed, and the same temporary names and renames as `ScriptUpload`, so an interrupted upload
/// never leaves a half file that runs. Round trips: three per file and two more, whatever the
/// files' sizes (the REPL method takes one per 700 bytes).
public enum ScriptStream {
    /// A window of 3 always fits the device's scheduler queue: scripts are small, and losing no
    /// chunk matters more than the last bit of speed.
    public static let window: FPGAStreamSettings = {
        var settings = FPGAStreamSettings()
        settings.window = 3
        settings.minimumWindow = 3
        return settings
    }()

    /// Uploads `scripts`; `data` is the data channel with no other reader meanwhile. Returns the
    /// chunks sent.
    @discardableResult
    public static func upload<C: Clock>(
        _ scripts: DeviceScripts, repl: RawRepl<C>, data: any ByteChannel, clock: C, stream: FPGAStreamSettings = window,
        commandTimeout: Duration
    ) async throws -> Int where C.Duration == Duration {
        try await repl.execute(FPGACommands.receiverDefinition)
        var frames = 0
        for file in scripts.files {
            let bytes = scripts.uploaded(file)
            try await repl.start(
                "_gu=open('\(file.name)\(ScriptUpload.temporarySuffix)','wb')\n_gf=0\n_gfr(\(bytes.count),_gu.write)")
            frames += try await FPGAUpdate.sendWindowed(bytes, data: data, clock: clock, stream: stream) { _ in }.frames
            // The receiver returned to the REPL and printed its count: enter again to skip that.
            try await repl.enter()
            let written = try await repl.execute("_gu.close()\ndel _gu\nprint(_gf)", timeout: commandTimeout)
            guard Int(written.trimmingCharacters(in: .whitespacesAndNewlines)) == bytes.count else {
                throw ReplError.unexpectedReply("\(file.name): the device wrote \(written.debugDescription) bytes of \(bytes.count)")
            }
        }
        try await repl.execute(ScriptUpload.finish(scripts), timeout: commandTimeout)
        return frames
    }
}
