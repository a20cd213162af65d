// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine

/// What went wrong, said in a few words for the glasses' seven lines of 26 characters (the full
/// message goes to QueryFailed and the log).
public enum GlassesWording {
    public static func text(for error: AssistantError) -> String {
        switch error {
        case .invalidArgs(let message): message
        case .notConfigured: "No AI server is set up. See glassd.conf."
        case .unauthorized: "The AI server refused the API key."
        case .rateLimited: "The AI server is busy or out of quota. Try again later."
        case .timeout: "No answer in time. Tap to try again."
        case .upstreamFailed(let message):
            message.hasPrefix("Cannot reach") ? "Cannot reach the AI server." : "The AI server failed. Tap to try again."
        case .internalFailure: "glassd could not save the answer."
        }
    }
}
