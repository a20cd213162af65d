// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// Real Secure DFU packages for tests, made by nrfutil in the world's venv
/// (Tests/World/make_dfu_package.py): signed init packets as Nordic's packager writes them.
enum DFUPackages {
    /// A package file and what the script read back from it.
    struct Made: Sendable, Decodable {
        let path: String
        let sha256: String
        /// The entries' sizes and the init packet's app_size; nil for a package too broken to open.
        let imageSize: Int?
        let initSize: Int?
        let appSize: Int?
        let signed: Bool?
    }

    /// How `broken(_:from:)` damages a good package.
    enum Damage: String, Sendable, CaseIterable {
        /// Bytes flipped in the middle of the image's stored data (its CRC no longer matches).
        case corruptZip = "corrupt-zip"
        /// application.bin cut to half; the init packet still states the whole size.
        case truncatedImage = "truncated-image"
        /// application.dat replaced by as many 0xFF bytes (not a protobuf).
        case badInit = "bad-init"
    }

    /// A package at `dir`/`name` with a synthetic image of `size` bytes that carries `version`
    /// (vXX.YYY.ZZZZ) where the virtual bootloader reads it (nrfutil pads the image to whole
    /// 32-bit words); for hardware 52, any SoftDevice (sd_req 0x00), signed with a throwaway key.
    static func make(size: Int, version: String, in dir: String, name: String = "app.zip") async throws -> Made {
        try await run(["--out", dir + "/" + name, "--size", "\(size)", "--version", version])
    }

    /// A damaged copy of `good`, next to it.
    static func broken(_ damage: Damage, from good: Made) async throws -> Made {
        let out = (good.path as NSString).deletingPathExtension + "-" + damage.rawValue + ".zip"
        return try await run(["--out", out, "--from", good.path, "--break", damage.rawValue])
    }

    private static func run(_ arguments: [String]) async throws -> Made {
        let result = try await runCommand(
            BLEWorld.venv + "/bin/python", [Paths.root + "/Tests/World/make_dfu_package.py"] + arguments)
        guard result.ok else { throw TestFailure("make_dfu_package.py failed: \(result.stderr)") }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(Made.self, from: Data(result.stdout.utf8))
    }
}
