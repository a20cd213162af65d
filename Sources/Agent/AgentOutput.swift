// SPDX-License-Identifier: GPL-2.0-or-later

/// What an agent session reports as it happens. The daemon puts it on D-Bus (AgentSession1) and in
/// History; tests record it.
public protocol AgentOutput: Sendable {
    /// The state changed; `error` says why it failed (empty otherwise).
    func state(_ state: AgentState, error: String)
    /// The channel the server runs the session under (set again if a retry took a new one).
    func channel(_ channel: String)
    /// A transcript line as it now stands.
    func transcript(_ line: TranscriptBoard.Line)
    /// The wearer's microphone level (dBFS), at most 10 a second.
    func level(_ dBFS: Double)
    /// An exchange that became final: what the wearer said and the agent's answer, turn `number` (from 1).
    func turn(_ number: Int, question: String, answer: String) async
    /// The agent's synthesized speech, when `[agent] speak` is on.
    func speech(pcm: [UInt8], sampleRate: Int, channels: Int)
}

/// Where the running session's channel is noted, so a glassd that crashed with one running can
/// find it on the server and stop it at its next start.
public protocol AgentLedger: Sendable {
    func started(channel: String) async
    func ended() async
}
