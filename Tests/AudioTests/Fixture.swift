// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Testing

/// The recorded questions in Fixtures/ (see make-fixtures.sh for how each was made).
enum Fixture {
    /// Where make-fixtures.sh puts the speech in speech-clean.s8 and speech-noisy.s8.
    static let speechStart: Duration = .milliseconds(1000)
    static let trailingPad: Duration = .milliseconds(1500)

    static func bytes(_ name: String) throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "s8", subdirectory: "Fixtures"))
        return Array(try Data(contentsOf: url))
    }

    /// The length of `count` bytes of 8 kHz audio.
    static func duration(bytes count: Int) -> Duration { .microseconds(Int64(count) * 125) }
}
