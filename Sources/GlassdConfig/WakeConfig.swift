// SPDX-License-Identifier: GPL-2.0-or-later
import TOMLKit
import Wake

extension Config {
    /// `[wake]`: off unless `phrase` is set. The phrase's words are checked against the speech
    /// model's dictionary when glassd starts listening, not here: the model may be installed later.
    static func wakeSettings(_ table: TOMLTable?, reader: Reader, file: String) throws(Config.Error) -> WakeSettings? {
        guard let table else { return nil }
        func fail(_ what: String) -> Config.Error { Config.Error(description: "\(file): [wake] \(what)") }
        let known: Set = ["phrase", "source", "sensitivity", "model"]
        if let unknown = table.keys.sorted().first(where: { !known.contains($0) }) { throw fail("has no setting \(unknown)") }
        guard let phrase = try reader.string(table, "wake", "phrase") else { return nil }
        do {
            _ = try WakeSettings.normalized(phrase)
        } catch {
            throw fail("phrase: \(error)")
        }
        var settings = WakeSettings(phrase: phrase)
        if let name = try reader.string(table, "wake", "source") {
            guard let source = WakeSource(rawValue: name) else { throw fail("source must be \"glasses\" or \"host\", not \"\(name)\"") }
            settings.source = source
        }
        if let name = try reader.string(table, "wake", "sensitivity") {
            guard let level = WakeSensitivity(rawValue: name) else {
                throw fail("sensitivity must be \"low\", \"normal\" or \"high\", not \"\(name)\"")
            }
            settings.sensitivity = level
        }
        settings.model = try reader.string(table, "wake", "model") ?? settings.model
        return settings
    }
}
