// SPDX-License-Identifier: GPL-2.0-or-later
import ArgumentParser
import DBusKit
import GlassdAPI

struct Display: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show TEXT on the paired glasses (transliterated to the display's font).")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The text, up to 4 KiB.")
    var text: String

    func run() async throws {
        try await reportingErrors {
            let client = try await options.connect()
            let paired = try await client.property(GlassdBus.Property.pairedDevice).string ?? "/"
            guard paired != "/" else { throw ClientError.notPaired }
            _ = try await client.connection.call(
                GlassdBus.name, path: paired, interface: GlassdBus.deviceInterface, member: GlassdBus.DeviceMethod.display,
                [.string(text)])
            if options.json { try printJSON(["shown": true]) }
        }
    }
}
