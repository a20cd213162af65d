// SPDX-License-Identifier: GPL-2.0-or-later
import Frame
import Glasses
import LinkKit
import Synchronization
import Testing

@Suite("Frame app: version, upload, check", .timeLimit(.minutes(5)))
struct FrameAppTests {
    static let app = FrameApp(files: [
        .init(name: "glassd_app.lua", contents: Array("GLASSD_APP_VERSION = '-'\r\nlocal s = \"é€😀\\t'\"\nfunction glassd_run() end\n".utf8)),
        .init(name: "main.lua", contents: Array("require('glassd_app')\nglassd_run()\n".utf8)),
    ])

    /// Answers the check as the firmware would, from the fake's files and app.
    static let checking: @Sendable (String, inout FakeFrame.State) -> FakeFrame.Reply? = { chunk, s in
        if chunk == FrameCommands.check {
            // An empty stamp reads as nil on the device, so '-'.
            let stamp = s.files[FrameApp.stampFile].flatMap { $0.isEmpty ? nil : String(decoding: $0, as: UTF8.self) }
            return .prints(["v25.080.0838", "87.5", s.appVersion ?? "-", stamp ?? "-"])
        }
        if chunk == FrameCommands.load, s.files[FrameApp.appFile] != nil {
            s.appVersion = nil
            return .notes(FakeFrame.start(&s))
        }
        return nil
    }

    @Test("the version: SHA-256 hex of names and contents, blind to the version line")
    func version() {
        let version = Self.app.version
        #expect(version.count == 64 && version.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        let restamped = FrameApp(files: [
            .init(name: "glassd_app.lua", contents: Array("GLASSD_APP_VERSION = 'abc'\nlocal s = \"é€😀\\t'\"\nfunction glassd_run() end\n".utf8)),
            Self.app.files[1],
        ])
        #expect(restamped.version == version)
        let edited = FrameApp(files: [Self.app.files[0], .init(name: "main.lua", contents: Array("require('glassd_app')\n".utf8))])
        #expect(edited.version != version)
        let renamed = FrameApp(files: [Self.app.files[0], .init(name: "main2.lua", contents: Self.app.files[1].contents)])
        #expect(renamed.version != version)
    }

    @Test("the uploaded app file carries the version on its first line; other files go as they are")
    func uploaded() {
        let app = Self.app
        let file = app.uploaded(app.files[0])
        #expect(String(decoding: file, as: UTF8.self).hasPrefix("GLASSD_APP_VERSION = '\(app.version)'\nlocal s"))
        #expect(FrameApp.stampedVersion(in: file) == app.version)
        #expect(FrameApp.stampedVersion(in: app.files[0].contents) == "-")
        #expect(app.uploaded(app.files[1]) == app.files[1].contents)
    }

    @Test("the bundled app: the placeholder first, the hardware file it requires next, main.lua last, each non-trivial")
    func bundled() {
        let app = FrameApp.bundled
        #expect(app.files.map(\.name) == ["glassd_app.lua", "glassd_hw.lua", "main.lua"])
        let source = String(decoding: app.files[0].contents, as: UTF8.self)
        #expect(source.hasPrefix("GLASSD_APP_VERSION = '-'\n"))
        #expect(source.contains("function glassd_run()"))
        #expect(source.contains("require('glassd_hw')"))
        #expect(String(decoding: app.files[1].contents, as: UTF8.self).contains("HW.QUESTION_MIC"))
        #expect(String(decoding: app.files[2].contents, as: UTF8.self).contains("require('glassd_app')"))
    }

    @Test("the check fits the Frame's 244-byte Lua string and parses its four lines")
    func check() throws {
        #expect(FrameCommands.check.utf8.count <= FrameMTU(mtu: 247).maxLuaString)
        #expect(!FrameCommands.check.contains("\n"))
        let version = String(repeating: "ab", count: 32)
        #expect(try FrameCommands.parseCheck("v25.080.0838\n87.5\n-\n\(version)")
            == FrameDeviceInfo(firmwareVersion: "v25.080.0838", battery: 88, runningApp: nil, storedApp: version))
        #expect(try FrameCommands.parseCheck("-\n100.4\n\(version)\n-")
            == FrameDeviceInfo(firmwareVersion: nil, battery: 100, runningApp: version, storedApp: nil))
        #expect(try FrameCommands.parseCheck("v1\n-\n-\n-").battery == nil)
        #expect(try FrameCommands.parseCheck("v1\n42\n-\n-").battery == 42)
        #expect(throws: LuaReplError.unexpectedReply("a device check gave 3 lines")) { try FrameCommands.parseCheck("v1\n42\n-") }
        #expect(throws: LuaReplError.unexpectedReply("a device check gave 5 lines")) { try FrameCommands.parseCheck("v1\n42\n-\n-\n-") }
        #expect(throws: LuaReplError.unexpectedReply("a device check gave 4 lines")) { try FrameCommands.parseCheck("v1\n\n-\n-") }
        #expect(throws: LuaReplError.unexpectedReply("a battery level of \"full\"")) { try FrameCommands.parseCheck("v1\nfull\n-\n-") }
        #expect(throws: LuaReplError.unexpectedReply("a battery level of \"-3\"")) { try FrameCommands.parseCheck("v1\n-3\n-\n-") }
        #expect(throws: LuaReplError.unexpectedReply("a battery level of \"nan\"")) { try FrameCommands.parseCheck("v1\nnan\n-\n-") }
    }

    @Test("upload through the REPL: the old stamp first, every file, the stamp last; the check then sees it, and a reset runs it")
    func upload() async throws {
        let app = Self.app
        let data = Received()
        let device = FakeFrame(handler: Self.checking)
        device.state.withLock { $0.files = [FrameApp.stampFile: Array("old".utf8), "main.lua": Array("old".utf8)] }
        try await withRepl(device, data: data) { repl async throws in
            // Small chunks, so every file takes several.
            let commands = try FrameCommands.upload(app, maxLuaString: 64)
            #expect(commands.first == "pcall(frame.file.remove,'glassd.ver');print(1)")
            let stampOpen = try #require(commands.firstIndex(of: "_gf=frame.file.open('glassd.ver','w');print(1)"))
            let mainOpen = try #require(commands.firstIndex(of: "_gf=frame.file.open('main.lua','w');print(1)"))
            #expect(mainOpen < stampOpen)
            #expect(commands[(stampOpen + 1)...].dropLast().allSatisfy { $0.hasPrefix("_gf:write(") })
            #expect(commands.allSatisfy { $0.utf8.count <= 64 })
            for command in commands {
                #expect(try await repl.execute(command) == LuaFileUpload.reply)
            }
            let info = try FrameCommands.parseCheck(try await repl.execute(FrameCommands.check, replies: FrameCommands.checkReplies))
            #expect(info == FrameDeviceInfo(firmwareVersion: "v25.080.0838", battery: 88, runningApp: nil, storedApp: app.version))
            try await repl.reset()
            // The app announces itself with the version stamped into its file.
            #expect(try await repl.execute(FrameCommands.check, replies: 4).split(separator: "\n")[2] == app.version)
        }
        let files = device.state.withLock { $0.files }
        #expect(files["glassd_app.lua"] == app.uploaded(app.files[0]).filter { $0 != 0x0D })
        #expect(files["main.lua"] == app.files[1].contents)
        #expect(files[FrameApp.stampFile] == Array(app.version.utf8))
        #expect(data.all == [.packet(AppMessage.ready(app.version).encoded)])
    }

    @Test("an upload cut short leaves no stamp: the check shows no stored app")
    func cutShort() async throws {
        let app = Self.app
        let device = FakeFrame(handler: Self.checking)
        device.state.withLock { $0.files = [FrameApp.stampFile: Array(app.version.utf8)] }
        try await withRepl(device) { repl async throws in
            let commands = try FrameCommands.upload(app, maxLuaString: repl.mtu.maxLuaString)
            for command in commands.prefix(commands.count - 2) {
                try await repl.execute(command)
            }
            let info = try FrameCommands.parseCheck(try await repl.execute(FrameCommands.check, replies: 4))
            #expect(info.storedApp == nil)
        }
    }
}
