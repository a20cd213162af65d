// SPDX-License-Identifier: GPL-2.0-or-later
import Crypto
import Foundation
import ZIPFoundation

/// Nordic DFU packages made in memory, as nrfutil makes them.
public enum TestPackages {
    public static let manifest = #"{"manifest":{"application":{"bin_file":"application.bin","dat_file":"application.dat"}}}"#

    /// A ZIP of `files`, written by ZIPFoundation as nrfutil would (deflated).
    public static func zip(_ files: [(String, [UInt8])]) throws -> [UInt8] {
        let archive = try Archive(accessMode: .create)
        for (name, bytes) in files {
            try archive.addEntry(
                with: name, type: .file, uncompressedSize: Int64(bytes.count), compressionMethod: .deflate
            ) { position, size in
                Data(bytes[Int(position)..<Int(position) + size])
            }
        }
        guard let data = archive.data else { throw CocoaError(.fileWriteUnknown) }
        return [UInt8](data)
    }

    /// A package of `image` with a signed init packet.
    public static func package(_ image: [UInt8]) throws -> [UInt8] {
        try zip([("manifest.json", Array(manifest.utf8)), ("application.dat", InitPackets.signed(for: image)), ("application.bin", image)])
    }
}
