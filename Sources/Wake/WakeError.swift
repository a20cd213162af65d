// SPDX-License-Identifier: GPL-2.0-or-later

/// Why the wake phrase cannot be listened for.
public enum WakeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The speech model is not installed (Debian's pocketsphinx-en-us) or would not load.
    case model(String)
    /// A word of the phrase is not in the model's dictionary, so it cannot be spotted.
    case unknownWord(String)
    case badPhrase(String)

    public var description: String {
        switch self {
        case .model(let detail): "The wake phrase's speech model could not be loaded: \(detail)"
        case .unknownWord(let word): "The wake phrase's word \"\(word)\" is not in the speech model's dictionary."
        case .badPhrase(let detail): "The wake phrase cannot be used: \(detail)"
        }
    }
}
