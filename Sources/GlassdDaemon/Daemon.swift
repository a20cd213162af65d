// SPDX-License-Identifier: GPL-2.0-or-later
import Agent
import AssistantEngine
import Audio
import Bluetooth
import Concurrency
import CSystemd
import DBusKit
import Foundation
import GlassdAPI
import GlassdConfig
import GlassdContract
import Glasses
import HostAudio
import HTTPKit
import LinkKit
import Logging
import Product
import Scene
import ServiceLifecycle
import Skills
import Storage
import UnixSignals
import Updates

/// How glassd was started.
public struct DaemonOptions: Sendable {
    public var bus: BusAddress
    public var configPath: String?
    public var stateDirectory: String?
    public var logLevel: Logger.Level
    /// The kinds of glasses served, in the order a device is matched against them.
    public var kinds: [GlassesKind]

    public init(bus: BusAddress, configPath: String?, stateDirectory: String?, logLevel: Logger.Level, kinds: [GlassesKind]) {
        self.bus = bus
        self.configPath = configPath
        self.stateDirectory = stateDirectory
        self.logLevel = logLevel
        self.kinds = kinds
    }
}

/// Wires the daemon together and runs it until SIGTERM/SIGINT.
public enum Daemon {
    public static func run(_ options: DaemonOptions) async throws {
        let level = options.logLevel
        let journal = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil
        LoggingSystem.bootstrap { JournalLogHandler(label: $0, level: level, toJournal: journal) }
        let logger = Logger(label: "glassd")

        // History and keys are private: files glassd creates are for its own user only.
        umask(0o077)
        // A peer that closes a socket must give us EPIPE, not kill the daemon.
        signal(SIGPIPE, SIG_IGN)
        let config = try Config.load(path: options.configPath)
        let stateDirectory = stateDirectory(options)
        let database = try GlassdDatabase(directory: stateDirectory)
        let store = SQLiteConversationStore(database: database)
        let key = APIKey.load(config: config)
        // The key is in memory now; keep it out of the environment from here on.
        unsetenv("GLASSD_API_KEY")

        let transport = try CurlHTTPTransport()
        // SUSI answers the questions itself; speech still needs a speech server ([transcription]).
        let susi = config.assistantKind == "susi" ? config.baseURL.map { baseURL in
            SusiClient(
                config: SusiConfig(
                    baseURL: baseURL, language: config.transcriptionLanguage ?? "en", timeout: .seconds(config.timeoutSeconds)),
                transport: transport)
        } : nil
        let client = (susi != nil ? nil : config.baseURL).map { baseURL in
            OpenAIChatClient(
                config: ChatServerConfig(
                    baseURL: baseURL, model: config.chatModel, apiKey: key?.key,
                    timeout: .seconds(config.timeoutSeconds), showAnswerTool: config.showAnswerTool ?? !config.embedded),
                transport: transport)
        }
        let transcriber = (config.transcriptionURL ?? (susi != nil ? nil : config.baseURL)).map { baseURL in
            TranscriptionClient(
                config: TranscriptionConfig(
                    baseURL: baseURL, model: config.transcriptionModel,
                    apiKey: APIKey.transcriptionKey(config: config, chatKey: key?.key),
                    timeout: .seconds(config.timeoutSeconds), language: config.transcriptionLanguage),
                transport: transport)
        }
        let photos = try PhotoStore(database: database, keep: config.photosKept)
        let speechOut = Self.speechOut(config, chatKey: key?.key, transport: transport, logger: logger)

        let settings = SQLiteSettingsStore(database: database)
        let mode = ModeSetting(await SettingsService.storedMode(settings, logger: logger))
        let connection = try await BusConnection.open(options.bus)
        var mayShowOnGlasses: @Sendable (String) async -> Bool = { _ in true }
        if options.bus == .system {
            // On the system bus every local user can reach glassd: what changes state is polkit's call.
            let authority = PolkitAuthority(connection: connection, logger: logger)
            try await connection.gate(PolkitAuthority.gatedCalls) { await authority.check($0) }
            mayShowOnGlasses = { sender in await authority.allowsDisplay(sender) }
        }
        let signals = ManagerSignals(connection: connection, logger: logger)
        let turnKeeper = TurnKeeper(store: SQLiteTurnTimingStore(database: database), signals: signals, logger: logger)
        let statuses = Watched(SessionStatus(state: .disconnected))
        let assistant = Assistant(
            client: client, store: store, historyBudget: config.historyBudget,
            conversationTokenLimit: Int64(config.conversationTokenLimit), onTokensUsed: { signals.tokensUsed($0) },
            local: SkillsWiring.answering(LocalSkills(enabled: config.skills), store: store, glasses: statuses),
            typedAnswers: SQLiteTypedAnswerStore(database: database), susi: susi)
        let abilities = BackendAbilities(config)
        let updateMark = Watched(UpdateMark.none)
        // Who the wearer's questions go to: glassd's voice questions, or a running agent session.
        let claim = EventClaim()
        let voiceSettings = VoiceSettings(
            trailingSilence: .milliseconds(config.trailingSilenceMS), maximumLength: .seconds(config.maxUtteranceSeconds),
            // 0 (off): no pause is ever shorter than the trailing silence, so none is reported.
            pauseSilence: .milliseconds(config.eagerPauseMS == 0 ? config.trailingSilenceMS : config.eagerPauseMS),
            statementSilence: .milliseconds(config.statementPauseMS))
        let linked = await linkInterface(
            config: config, kinds: options.kinds, database: database, connection: connection, statuses: statuses, updateMark: updateMark,
            logger: logger
        ) {
            session, supervisor in
            let scene = SceneWatch(
                session: session, client: client, visionModel: config.visionModel, sees: abilities.sees,
                photos: photos, signals: signals, mode: mode,
                settings: SceneWatch.Settings(
                    interval: .seconds(config.sceneIntervalSeconds),
                    thresholds: FrameThresholds(
                        darkThreshold: config.sceneDarkThreshold, blurThreshold: config.sceneBlurThreshold,
                        changeBits: config.sceneChangeBits)),
                logger: logger)
            let voice = VoiceQueries(
                session: session, assistant: assistant, transcriber: transcriber,
                transcriptions: SQLiteTranscriptionStore(database: database), photos: photos, signals: signals,
                mode: mode, voice: voiceSettings,
                visionModel: config.visionModel, abilities: abilities,
                device: { await supervisor.snapshot().paired?.description },
                latestSceneFrame: { await scene.latestFrame }, clock: ContinuousClock(), logger: logger, speech: speechOut,
                turns: turnKeeper)
            return GlassesProduct(session: session, voice: voice, scene: scene, claim: claim)
        }
        let updateHistory = SQLiteUpdateHistory(database: database)
        let link = linked?.interface
        let updates = linked.map { linked in
            UpdateService(
                connection: connection, sessions: linked.sessions, supervisor: linked.interface.supervisor, statuses: statuses,
                history: updateHistory,
                policy: UpdatePolicy(
                    firmwareDirectory: config.firmwareDirectory ?? stateDirectory + "/firmware", auto: config.autoUpdate,
                    minBattery: UInt8(config.updateMinBattery)),
                settings: UpdateSettings(
                    bootloaderConnectWindow: .seconds(config.bootloaderConnectSeconds),
                    restartTimeout: .seconds(config.updateRestartSeconds)),
                mark: updateMark, markShown: linked.interface.publishedMark, logger: logger)
        }
        var agentSettings = config.agent
        if agentSettings?.speak == true, !HostAudioAccess.current.reachable(.playback) {
            // Under the hardened system unit no player could reach the speakers: said once, never tried.
            logger.warning("\(HostAudioAccess.speakerUnreachable)")
            agentSettings?.speak = false
        }
        let agents = AgentService(
            settings: agentSettings, connection: connection, transport: transport,
            openSocket: { url in try await WebSocketAgentSocket.open(url) }, glasses: linked?.sessions,
            statuses: link == nil ? nil : statuses, claim: claim, mode: mode, assistant: assistant, voice: voiceSettings,
            store: settings, logger: logger,
            // An agent's screen is its answer, live: written as it comes through the desk (not queued
            // as Display's text), so notifications wait for it.
            screen: liveScreen(linked?.desk))
        link?.beforeUnpair.add { await agents.stopActive() }
        let manager = ManagerInterface(
            signals: signals, assistant: assistant, archive: HistoryArchive(database: database),
            typedAnswers: SQLiteTypedAnswerStore(database: database), photos: photos,
            mode: mode, sees: abilities.sees, backendDescription: Self.backendDescription(config, client, transcriber, voice: Self.speechOutServer(config)),
            privacy: config.privacyName,
            tokensUsed: try await assistant.tokensUsed(), logger: logger, link: link,
            updateMethods: updates?.methods ?? [
                GlassdBus.Manager1.Update.method { _ in
                    throw ErrorMapping.busError(GlassesRefusal.noBluetooth)
                },
                UpdateService.historyMethod(updateHistory, logger: logger),
            ], agents: agents, wake: config.wake, speech: speechOut, mayShowOnGlasses: mayShowOnGlasses,
            turnTimingStore: SQLiteTurnTimingStore(database: database), turns: turnKeeper)
        try await connection.addObjectManager(at: GlassdBus.managerPath)
        let notifications = NotificationInterface(desk: linked?.desk, logger: logger)
        try await connection.export(manager.spec(adding: notifications), at: GlassdBus.managerPath)
        try await connection.requestName(GlassdBus.name)

        let embeddedNote =
            (config.embedded ? " with the embedded default backend (a tiny model, often wrong; set a server to replace it)" : "")
            + (config.transcriptionEmbedded
                ? " and the embedded speech models ("
                    + (config.transcriptionTranslates ? "Whisper base translates)" : "English only, no translation)")
                : "")
        logger.info(
            "glassd \(glassdVersion) ready on \(GlassdBus.name)\(embeddedNote)",
            metadata: [
                "state_directory": "\(stateDirectory)",
                "backend": "\(client?.config.publicDescription ?? "none")",
                "api_key": "\(key?.source.rawValue ?? "none")",
                "privacy": "\(config.privacyName)",
            ])
        _ = sd_notify(0, "READY=1\nSTATUS=Answering on \(GlassdBus.name)")

        var services: [any Service] = [
            BusService(connection: connection, logger: logger),
            WatchdogService(connection: connection, database: database),
            SettingsService(mode: mode, store: settings, logger: logger),
            turnKeeper,
        ]
        if let linked {
            services.append(
                LinkService(
                    bluez: linked.interface.bluez, supervisor: linked.interface.supervisor, interface: linked.interface,
                    product: linked.product))
        }
        if let updates { services.append(UpdatePolicyService(updates: updates)) }
        if let desk = linked?.desk { services.append(DisplayService(desk: desk, connection: connection, logger: logger)) }
        services.append(agents)
        if let wake = config.wake {
            if let session = link?.session {
                services.append(WakeService(settings: wake, session: session, connection: connection, logger: logger))
            } else {
                logger.warning("[wake] is set, but there is no Bluetooth: no glasses to start a question on")
            }
        }
        let group = ServiceGroup(
            services: services,
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        try await group.run()
    }

    /// The glasses link, over BlueZ on the system bus (its own connection and thread); nil when
    /// there is no system bus, and then the link methods answer NoAdapter.
    static func linkInterface(
        config: Config, kinds: [GlassesKind], database: GlassdDatabase, connection: BusConnection, statuses: Watched<SessionStatus>,
        updateMark: Watched<UpdateMark>, logger: Logger,
        product: (any GlassesSession, LinkSupervisor) -> GlassesProduct<ContinuousClock>
    ) async -> (
        interface: LinkInterface, sessions: SessionRouter, product: GlassesProduct<ContinuousClock>, desk: DisplayDesk<ContinuousClock>
    )? {
        let system: BusConnection
        do {
            system = try await BusConnection.open(.system, threadName: "sd-bus-bluez")
        } catch {
            logger.warning("no system bus, so no Bluetooth: \(error)")
            return nil
        }
        let bluez = BlueZClient(bus: system, logger: logger)
        let settings = LinkSettings(
            adapter: config.adapter, scanTimeout: .seconds(config.scanTimeout),
            reconnect: ReconnectPolicy(maximum: .seconds(config.reconnectMaxSeconds)), kinds: kinds)
        let supervisor = LinkSupervisor(
            client: bluez, store: SQLiteDeviceStore(database: database), settings: settings, logger: logger)
        // Before the name is taken: a Pair must see the stored pairing.
        await supervisor.loadPairing()
        // Each link is served by its kind's session; the product and the bus see one.
        let session = SessionRouter(kinds.map { ($0.profile.name, $0.makeSession(logger)) })
        // What writes on the glasses' display goes through the desk, which decides what shows when.
        let display = config.display
        let desk = DisplayDesk(
            session: session, clock: ContinuousClock(),
            settings: DisplayDesk.Settings(
                minimumGap: .milliseconds(display.minimumGapMS), notificationWait: .seconds(display.notificationWaitSeconds),
                notificationsKept: display.notificationsKept, glanceTime: .seconds(display.glanceSeconds)),
            logger: logger, glanceFacts: { GlanceFacts(localBackend: config.privacyName != "cloud") })
        let product = product(desk, supervisor)
        let interface = LinkInterface(
            connection: connection, supervisor: supervisor, bluez: bluez, session: desk, statuses: statuses,
            updateMark: updateMark, logger: logger)
        return (interface, session, product, desk)
    }

    /// An agent session's live screen, through the desk; nil without glasses.
    static func liveScreen(_ desk: DisplayDesk<ContinuousClock>?) -> (@Sendable (String) async throws -> Void)? {
        guard let desk else { return nil }
        return { text in try await desk.live(text) }
    }

    /// Manager1.Backend: the chat server and model, the speech server's when it is another, and
    /// the voice's (`[speech_out]`) when it is another.
    static func backendDescription(
        _ config: Config, _ client: OpenAIChatClient?, _ transcriber: TranscriptionClient?, voice: SpeechServerConfig? = nil
    ) -> String {
        let susi = config.assistantKind == "susi" ? config.baseURL.flatMap { URLComponents(string: $0)?.host }.map { "SUSI.AI at \($0)" } : nil
        var described = client?.config.publicDescription ?? susi ?? ""
        if config.transcriptionURL != nil, let speech = transcriber?.config.publicDescription { described += "; speech: " + speech }
        if config.speechOut.baseURL != nil, let voice { described += "; voice: " + voice.publicDescription }
        return described
    }

    /// `$STATE_DIRECTORY` under systemd (its first entry), else `--state-dir`, else /var/lib/glassd.
    static func stateDirectory(_ options: DaemonOptions) -> String {
        if let fromSystemd = ProcessInfo.processInfo.environment["STATE_DIRECTORY"]?.split(separator: ":").first {
            return String(fromSystemd)
        }
        return options.stateDirectory ?? "/var/lib/glassd"
    }
}
