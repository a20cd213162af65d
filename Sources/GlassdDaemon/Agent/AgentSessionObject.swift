// SPDX-License-Identifier: GPL-2.0-or-later
import Agent
import AssistantEngine
import DBusKit
import GlassdAPI
import GlassdContract
import HostAudio
import Logging
import Synchronization

/// One agent session on the bus: /org/glassd/agents/N with org.glassd.AgentSession1. What the
/// session reports is posted to the bus thread in order; final exchanges go to History.
final class AgentSessionObject: AgentOutput {
    let number: UInt32
    let path: String
    let graph: String
    private let connection: BusConnection
    private let assistant: Assistant
    private let speaker: AgentSpeaker?
    private let logger: Logger
    private let current = Mutex(AgentState.starting)
    /// Called with each state change (the service follows the session's life).
    private let changed: @Sendable (AgentState) -> Void

    init(
        number: UInt32, graph: String, connection: BusConnection, assistant: Assistant, speaker: AgentSpeaker?,
        logger: Logger, changed: @escaping @Sendable (AgentState) -> Void
    ) {
        self.number = number
        path = GlassdBus.agentsPath + "/\(number)"
        self.graph = graph
        self.connection = connection
        self.assistant = assistant
        self.speaker = speaker
        self.logger = logger
        self.changed = changed
    }

    var state: AgentState { current.withLock { $0 } }

    func spec(stop: @escaping @Sendable () async -> Void) -> InterfaceSpec {
        typealias Session = GlassdBus.AgentSession1
        return Session.spec(
            methods: [
                Session.Stop.method { _ in
                    await stop()
                    return []
                }
            ],
            properties: [
                Session.PropertySpec.state(AgentState.starting.rawValue),
                Session.PropertySpec.graph(graph),
                Session.PropertySpec.channel(""),
                Session.PropertySpec.error(""),
            ])
    }

    func state(_ state: AgentState, error: String) {
        current.withLock { $0 = state }
        let path = self.path
        connection.post { connection in
            if state == .failed {
                try? connection.setProperty(
                    GlassdBus.Agent.error, to: .string(error.busSafe), interface: GlassdBus.agentInterface, at: path)
            }
            try? connection.setProperty(
                GlassdBus.Agent.state, to: .string(state.rawValue), interface: GlassdBus.agentInterface, at: path)
        }
        // The player ends with the session (it plays what it has first).
        if state == .stopped || state == .failed { speaker?.finish() }
        changed(state)
    }

    func channel(_ channel: String) {
        let path = self.path
        connection.post { connection in
            try? connection.setProperty(GlassdBus.Agent.channel, to: .string(channel), interface: GlassdBus.agentInterface, at: path)
        }
    }

    func transcript(_ line: TranscriptBoard.Line) {
        post(
            GlassdBus.Agent.transcript,
            GlassdBus.AgentSession1.Transcript(role: line.role.rawValue, text: line.text.busSafe, final: line.isFinal, textTS: line.textTS)
                .values)
    }

    func level(_ dBFS: Double) {
        post(GlassdBus.Agent.level, GlassdBus.AgentSession1.Level(dbfs: dBFS).values)
    }

    func turn(_ number: Int, question: String, answer: String) async {
        let id = glassdAgentQueryID(session: self.number, turn: number)
        do {
            try await assistant.record(question: question, answer: answer, queryID: id, mode: .assistant)
        } catch {
            logger.error("cannot keep the agent's turn in History: \(error.message)", metadata: ["query_id": "\(id)"])
        }
    }

    func speech(pcm: [UInt8], sampleRate: Int, channels: Int) {
        speaker?.play(pcm, sampleRate: sampleRate, channels: channels)
    }

    private func post(_ signal: String, _ arguments: [DBusValue]) {
        connection.post(signal, interface: GlassdBus.agentInterface, at: path, arguments) { [logger] error in
            logger.warning("cannot emit \(signal), ignoring: \(error)")
        }
    }

}
