// SPDX-License-Identifier: GPL-2.0-or-later
import Agent
import AssistantEngine
import Audio
import Concurrency
import DBusKit
import Foundation
import GlassdAPI
import GlassdContract
import Glasses
import HostAudio
import Logging
import Product
import ServiceLifecycle
import Storage
import Synchronization

/// Manager1.StartAgent and the sessions it makes: one at a time, each on the bus as
/// /org/glassd/agents/N (the newest 8 kept), served here until stopped. At start-up a session a
/// crashed glassd left running on the server is found (its channel was noted) and stopped; at
/// shutdown the running one is stopped.
final class AgentService: Service, CustomStringConvertible {
    var description: String { "AgentService" }

    static let kept = 8
    static let ledgerKey = "agent_channel"

    let settings: AgentSettings?
    let connection: BusConnection
    let client: TENClient?
    let openSocket: AgentSocketOpener
    let glasses: (any GlassesSession)?
    /// Where a session's live screen goes (the display desk).
    let screen: (@Sendable (String) async throws -> Void)?
    let statuses: Watched<SessionStatus>?
    let claim: EventClaim
    let mode: ModeSetting
    let assistant: Assistant
    let voice: VoiceSettings
    let ledger: SettingsLedger
    let logger: Logger

    private struct Sessions {
        var next: UInt32 = 1
        /// Oldest first.
        var objects: [AgentSessionObject] = []
        var active: AgentRun<ContinuousClock>?
        var reserved = false
    }

    private let sessions = Mutex(Sessions())
    private let launches: AsyncStream<AgentRun<ContinuousClock>>
    private let launch: AsyncStream<AgentRun<ContinuousClock>>.Continuation

    init(
        settings: AgentSettings?, connection: BusConnection, transport: any HTTPTransport, openSocket: @escaping AgentSocketOpener,
        glasses: (any GlassesSession)?, statuses: Watched<SessionStatus>?, claim: EventClaim, mode: ModeSetting,
        assistant: Assistant, voice: VoiceSettings, store: SQLiteSettingsStore, logger: Logger,
        screen: (@Sendable (String) async throws -> Void)? = nil
    ) {
        self.screen = screen
        self.settings = settings
        self.connection = connection
        client = settings.map { TENClient(baseURL: $0.baseURL, transport: transport) }
        self.openSocket = openSocket
        self.glasses = glasses
        self.statuses = statuses
        self.claim = claim
        self.mode = mode
        self.assistant = assistant
        self.voice = voice
        ledger = SettingsLedger(store: store, key: Self.ledgerKey, logger: logger)
        self.logger = logger
        (launches, launch) = AsyncStream.makeStream(of: AgentRun<ContinuousClock>.self)
    }

    var startMethod: InterfaceSpec.Method {
        GlassdBus.Manager1.StartAgent.method { [self] call in
            [.objectPath(try await start(call))]
        }
    }

    var agentsProperty: InterfaceSpec.Property {
        GlassdBus.Manager1.PropertySpec.agents([])
    }

    func run() async throws {
        await recover()
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                for await run in launches {
                    group.addTask { await run.serve() }
                }
            }
        } onGracefulShutdown: { [self] in
            // Not cancelled: each session tells its server to stop on its way out.
            sessions.withLock { $0.active }?.stop()
            launch.finish()
        }
    }

    /// Stops the running session, if any, and waits until it has (Unpair).
    func stopActive() async {
        guard let run = sessions.withLock({ $0.active }) else { return }
        run.stop()
        await run.ended.wait()
    }

    private func start(_ call: MethodCall) async throws -> String {
        guard let settings, let client else { throw ErrorMapping.busError(AgentStartRefusal.noServer) }
        let graph: String
        do throws(AgentStartRefusal) {
            graph = try Self.graph(in: call.arguments.first, default: settings.graph)
        } catch {
            throw ErrorMapping.busError(error)
        }
        let number = try sessions.withLock { s throws(BusError) -> UInt32 in
            guard !s.reserved else { throw ErrorMapping.busError(AgentStartRefusal.sessionRuns) }
            s.reserved = true
            defer { s.next += 1 }
            return s.next
        }
        let object = AgentSessionObject(
            number: number, graph: graph, connection: connection, assistant: assistant,
            speaker: settings.speak ? AgentSpeaker(logger: logger) : nil, logger: logger
        ) { [weak self] state in self?.changed(number, state) }
        let run = AgentRun(
            graph: graph, settings: settings, client: client, openSocket: openSocket, glasses: glasses, statuses: statuses,
            claim: claim, voice: voice, output: object, ledger: ledger, clock: ContinuousClock(),
            logger: Self.logger(logger, number), screen: screen)
        let dropped = sessions.withLock { s -> [AgentSessionObject] in
            s.objects.append(object)
            s.active = run
            let excess = max(0, s.objects.count - Self.kept)
            defer { s.objects.removeFirst(excess) }
            return Array(s.objects.prefix(excess))
        }
        try await connection.export(object.spec { [weak run] in
            guard let run else { return }
            run.stop()
            await run.ended.wait()
        }, at: object.path, announce: true)
        for old in dropped { await connection.unexport(interface: GlassdBus.agentInterface, at: old.path, announce: true) }
        await publishAgents()
        do {
            try await run.start()
        } catch {
            throw ErrorMapping.busError(for: error)
        }
        if case .terminated = launch.yield(run) {
            // glassd is stopping: the session ends at once, and the server is told.
            run.stop()
            await run.serve()
        }
        return object.path
    }

    static func logger(_ base: Logger, _ number: UInt32) -> Logger {
        var logger = base
        logger[metadataKey: "agent"] = "\(number)"
        return logger
    }

    var isActive: Bool { sessions.withLock { $0.reserved } }

    /// StartAgent's options (dbus/org.glassd.Manager1.xml's keys): `graph` (s) only.
    static func graph(in options: DBusValue?, default graph: String) throws(AgentStartRefusal) -> String {
        guard let options else { return graph }
        let parsed: GlassdBus.Manager1.StartAgentOptions
        do throws(ContractError) {
            parsed = try GlassdBus.Manager1.StartAgentOptions(options)
        } catch {
            switch error {
            case .wrongType(at: "", _, _): throw .optionsNotADictionary
            case .unknownKey(let name, _, _): throw .unknownOption(name)
            case .wrongType, .missingArgument: throw .badGraph
            }
        }
        guard let chosen = parsed.graph else { return graph }
        guard !chosen.isEmpty else { throw .badGraph }
        return chosen
    }

    /// Follows a session's life: while it runs Mode reads agent; once it has ended another may start.
    private func changed(_ number: UInt32, _ state: AgentState) {
        switch state {
        case .running:
            setMode(AgentSettings.modeName)
        case .stopped, .failed:
            let wasActive = sessions.withLock { s -> Bool in
                guard let object = s.objects.last, object.number == number, s.reserved else { return false }
                s.active = nil
                s.reserved = false
                return true
            }
            if wasActive { setMode(mode.mode.rawValue) }
        case .starting, .stopping:
            break
        }
    }

    private func setMode(_ value: String) {
        connection.post { connection in
            try? connection.setProperty(
                GlassdBus.Property.mode, to: .string(value), interface: GlassdBus.managerInterface, at: GlassdBus.managerPath)
        }
    }

    private func publishAgents() async {
        let paths = sessions.withLock { $0.objects.map { DBusValue.objectPath($0.path) } }
        connection.post { connection in
            try? connection.setProperty(
                GlassdBus.Property.agents, to: .array(element: "o", paths), interface: GlassdBus.managerInterface,
                at: GlassdBus.managerPath)
        }
    }

    /// A session a crashed glassd left on the server (its channel still noted) is stopped.
    private func recover() async {
        guard let client, let channel = await ledger.channel() else { return }
        do {
            let workers = try await client.list()
            if workers.contains(where: { $0.channel == channel }) {
                try await client.stop(requestID: UUID().uuidString.lowercased(), channel: channel)
                logger.notice("stopped the agent session glassd left running", metadata: ["channel": "\(channel)"])
            }
            await ledger.ended()
        } catch {
            logger.info("cannot look for an agent session left running: \(error.message)", metadata: ["channel": "\(channel)"])
        }
    }
}

extension AgentSettings {
    /// What Manager1.Mode reads while a session runs.
    static let modeName = "agent"
}

/// Notes the running session's channel in the settings table (AgentLedger).
struct SettingsLedger: AgentLedger {
    let store: SQLiteSettingsStore
    let key: String
    let logger: Logger

    func started(channel: String) async { await set(channel) }
    func ended() async { await set("") }

    func channel() async -> String? {
        let value = try? await store.value(key)
        return value.flatMap { $0.isEmpty ? nil : $0 }
    }

    private func set(_ value: String) async {
        do {
            try await store.set(key, to: value)
        } catch {
            logger.warning("cannot note the agent session's channel: \(error)")
        }
    }
}
