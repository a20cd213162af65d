// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import Foundation

/// "What's my battery", "are my glasses connected": read from the session's state, which the
/// model cannot know.
enum GlassesSkill {
    private enum Topic { case battery, connection, status }

    private static let questions: [String: Topic] = {
        var table: [String: Topic] = [:]
        for text in [
            "battery", "battery level", "battery status", "my battery", "what is my battery", "what is the battery",
            "what is my battery level", "what is the battery level", "what is my battery at", "glasses battery",
            "glasses battery level", "what is the glasses battery", "what is the glasses' battery",
            "what is the battery of my glasses", "what is the battery level of my glasses", "how is my battery",
            "how is the battery", "how much battery is left", "how much battery do i have",
            "how much battery do the glasses have", "how much battery do my glasses have", "how much battery left", "how much battery", "battery left",
            "how much charge is left", "how much charge do my glasses have", "how much charge do the glasses have",
            "what is my battery percentage", "battery percentage", "how charged are my glasses",
        ] { table[text] = .battery }
        for text in [
            "are my glasses connected", "are the glasses connected", "are glasses connected",
            "are my glasses paired", "are the glasses paired", "is my glasses connected",
            "are my glasses on", "glasses connected",
        ] { table[text] = .connection }
        for text in [
            "glasses status", "status of my glasses", "status of the glasses", "what is the glasses status",
            "what is the glasses' status", "what is the status of my glasses", "what is the status of the glasses",
            "how are my glasses", "my glasses status", "what is my glasses status", "glasses state",
        ] { table[text] = .status }
        return table
    }()

    static func answer(_ text: String, glasses: GlassesState?) -> TypedAnswer? {
        guard let topic = questions[text] else { return nil }
        guard let glasses else { return .text("No glasses are paired.") }
        switch topic {
        case .battery:
            guard glasses.connected else { return .text("The glasses are not connected, so their battery is unknown.") }
            guard let battery = glasses.battery else { return .text("The glasses have not reported their battery.") }
            return .text("The glasses' battery is at \(battery) %.")
        case .connection:
            return .text(glasses.connected ? "The glasses are connected." : "The glasses are not connected.")
        case .status:
            let named = glasses.name.map { "The glasses (\($0))" } ?? "The glasses"
            var text = "\(named) are \(glasses.connected ? "connected" : "not connected"), state \(glasses.state)."
            if glasses.connected, let battery = glasses.battery { text += " The battery is at \(battery) %." }
            return .text(text)
        }
    }
}
