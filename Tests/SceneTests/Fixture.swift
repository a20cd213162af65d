// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Testing

/// The 640x400 JPEGs in Fixtures/ (see make-fixtures.py for how each was made).
enum Fixture: String, CaseIterable {
    case sharp, blurred, dark, reencoded, moved, other

    func bytes() throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: rawValue, withExtension: "jpg", subdirectory: "Fixtures"))
        return Array(try Data(contentsOf: url))
    }
}
