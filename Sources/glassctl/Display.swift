// SPDX-License-Identifier: GPL-2.0-or-later
import ArgumentParser
import DBusKit
import GlassdAPI
import GlassdContract

struct Display: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show TEXT on the paired glasses (transliterated to the display's font).")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The text, up to 4 KiB.")
    var text: String

    func run() async throws {
        try await reportingErrors {
            let client = try await options.connect()
            let paired = try await client.manager.pairedDevice
            guard paired != "/" else { throw ClientError.notPaired }
            try await client.device(paired).display(text: text)
            if options.json { try printJSON(["shown": true]) }
        }
    }
}
