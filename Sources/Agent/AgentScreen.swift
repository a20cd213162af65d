// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// What the glasses show of a session: the wearer's last line, then the agent's, each cut from
/// the front to what the display holds (the newest words matter).
enum AgentScreen {
    /// The Monocle's display: about 7 lines of 26 characters; the wearer's line takes at most 2.
    static let userCharacters = 2 * 26 - 2
    static let totalCharacters = 7 * 26

    static func render(_ lines: [TranscriptBoard.Line]) -> String {
        let user = lines.last { $0.role == .user }.map { "> " + tail($0.text, userCharacters) }
        let budget = totalCharacters - (user.map { 26 * (($0.count + 25) / 26) } ?? 0)
        let assistant = lines.last { $0.role == .assistant }.map { tail($0.text, budget) }
        return [user, assistant].compactMap { $0 }.joined(separator: "\n")
    }

    /// The last `limit` characters, from a word start, with "…" where it was cut.
    static func tail(_ text: String, _ limit: Int) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count > limit, limit > 1 else { return trimmed }
        var cut = String(trimmed.suffix(limit - 1))
        if let space = cut.firstIndex(of: " "), cut.distance(from: cut.startIndex, to: space) < 12 {
            cut = String(cut[cut.index(after: space)...])
        }
        return "…" + cut
    }
}
