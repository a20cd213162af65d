// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Glasses
import Monocle
import Testing

@Suite("Script upload", .timeLimit(.minutes(5)))
struct ScriptUploadTests {
    /// Every byte value, several times over, in a file that is not Python at all.
    static let allBytes = DeviceScripts.File(name: "blob.bin", contents: (0..<2000).map { UInt8(truncatingIfNeeded: $0 * 7 + $0 / 256) })
    static let scripts = DeviceScripts(files: [
        allBytes,
        .init(name: "main.py", contents: Array("x = '''quotes ''' \\\\ \\n'''\nprint('main')\n".utf8) + (0...255).map(UInt8.init)),
    ])

    @Test("every command is printable ASCII within the ring, and never 0x1C")
    func commandsAreSafe() {
        let commands = ScriptUpload.commands(Self.scripts, maxCommandBytes: 960)
        #expect(commands.count > 4)
        for command in commands {
            #expect(command.utf8.count + 1 <= 960)
            #expect(command.utf8.allSatisfy { $0 == 0x0A || ($0 >= 0x20 && $0 < 0x7F) })
        }
        let check = DeviceCommands.check(Self.scripts)
        #expect(check.utf8.count + 1 <= 960, "the check command is \(check.utf8.count) bytes")
    }

    @Test("the version covers names and contents; main.py carries it as its first line")
    func version() {
        let other = DeviceScripts(files: [Self.allBytes, .init(name: "main.py", contents: [0x41])])
        #expect(other.version != Self.scripts.version)
        let renamed = DeviceScripts(files: [.init(name: "blob2.bin", contents: Self.allBytes.contents), Self.scripts.files[1]])
        #expect(renamed.version != Self.scripts.version)
        #expect(Self.scripts.version.count == 64)
        let main = Self.scripts.uploaded(Self.scripts.files[1])
        #expect(main.starts(with: Array("GLASSD_VERSION = \"\(Self.scripts.version)\"\n".utf8)))
        #expect(Self.scripts.uploaded(Self.allBytes) == Self.allBytes.contents)
    }

    @Test("run on a real MicroPython, the upload writes every byte value exactly; the device computes the same version", .enabled(if: MicroPython.available))
    func roundTripOnMicroPython() async throws {
        let directory = try MicroPython.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try await MicroPython.run(ScriptUpload.commands(Self.scripts, maxCommandBytes: 960), in: directory)
        for file in Self.scripts.files {
            let written = try #require(FileManager.default.contents(atPath: directory + "/" + file.name))
            #expect(Array(written) == Self.scripts.uploaded(file), "\(file.name)")
            #expect(!FileManager.default.fileExists(atPath: directory + "/" + file.name + ScriptUpload.temporarySuffix))
        }
        #expect(FileManager.default.fileExists(atPath: directory + "/" + DeviceScripts.freshMarker))
        let output = try await MicroPython.run([DeviceCommands.check(Self.scripts)], in: directory)
        let info = try DeviceCommands.parseCheck(output)
        #expect(info.storedScripts == Self.scripts.version)
        #expect(info.runningScripts == nil)
        #expect(info.firmwareVersion == "")  // no device module on the unix port
        // Edited on the device: the stored version no longer matches.
        try Data("print('edited')\n".utf8).write(to: URL(fileURLWithPath: directory + "/blob.bin"))
        let edited = try DeviceCommands.parseCheck(try await MicroPython.run([DeviceCommands.check(Self.scripts)], in: directory))
        #expect(edited.storedScripts != nil && edited.storedScripts != Self.scripts.version)
        // A missing file shows as no stored version.
        try FileManager.default.removeItem(atPath: directory + "/main.py")
        let missing = try DeviceCommands.parseCheck(try await MicroPython.run([DeviceCommands.check(Self.scripts)], in: directory))
        #expect(missing.storedScripts == nil)
    }

    @Test("a chunk repeated after a lost reply writes the same bytes at the same place", .enabled(if: MicroPython.available))
    func idempotentChunks() async throws {
        let directory = try MicroPython.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var commands = ScriptUpload.commands(Self.scripts, maxCommandBytes: 300)
        let repeated = try #require(commands.firstIndex { $0.contains(".seek(") && !$0.contains(".seek(0)") })
        commands.insert(commands[repeated], at: repeated + 1)
        _ = try await MicroPython.run(commands, in: directory)
        for file in Self.scripts.files {
            let written = try #require(FileManager.default.contents(atPath: directory + "/" + file.name))
            #expect(Array(written) == Self.scripts.uploaded(file))
        }
    }
}
