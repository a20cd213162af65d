// SPDX-License-Identifier: GPL-2.0-or-later

/// Why StartAgent was refused before a session began.
enum AgentStartRefusal: Error, Sendable, Equatable {
    /// No `[agent] base_url` in glassd.conf.
    case noServer
    /// One session at a time.
    case sessionRuns
    /// The options argument is not a{sv}.
    case optionsNotADictionary
    /// `graph` is not a non-empty string.
    case badGraph
    /// An option StartAgent does not know.
    case unknownOption(String)

    var message: String {
        switch self {
        case .noServer: "No agent server is configured: set [agent] base_url in glassd.conf to a TEN agent server."
        case .sessionRuns: "An agent session runs already: stop it first."
        case .optionsNotADictionary: "StartAgent takes a{sv} options."
        case .badGraph: "graph must be a non-empty string (s)."
        case .unknownOption(let name): "Unknown option \(name): StartAgent takes graph."
        }
    }
}
