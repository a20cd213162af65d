// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import GlassdAPI
import GlassdContract
import Glasses
import HostAudio
import Logging
import Product
import ServiceLifecycle
import Wake

/// `[wake]`: the spotter on its thread, the microphone it listens to, and the watch that starts a
/// question when it hears the phrase. Manager1.Wake mirrors where it stands.
struct WakeService: Service {
    let settings: WakeSettings
    let session: any GlassesSession
    let connection: BusConnection
    let logger: Logger
    /// Checked once at the start for `source = "host"`.
    var audio = HostAudioAccess.current

    /// Manager1.Wake before anything is heard: `state` "off" without [wake].
    static func property(_ settings: WakeSettings?) -> InterfaceSpec.Property {
        let initial =
            settings.map { WakeStatus(phrase: (try? WakeSettings.normalized($0.phrase)) ?? $0.phrase, source: $0.source.rawValue, state: .waiting) }
        return GlassdBus.Manager1.PropertySpec.wake(fields(initial))
    }

    static func value(_ status: WakeStatus?) -> DBusValue { fields(status).busValue }

    private static func fields(_ status: WakeStatus?) -> GlassdBus.Manager1.WakeFields {
        guard let status else { return .init(state: "off") }
        return .init(
            state: status.state.rawValue, phrase: status.phrase, source: status.source, heard: status.heard,
            listenedSeconds: status.listenedSeconds, error: status.error.busSafe)
    }

    func run() async throws {
        let reporter = BusWakeReporter(connection: connection, logger: logger)
        // Under the hardened system unit the host's microphone cannot be reached: said once,
        // never retried (the user's session is where it belongs).
        if settings.source == .host, !audio.reachable(.capture) {
            logger.warning("[wake] \(HostAudioAccess.microphoneUnreachable)")
            return await failed(HostAudioAccess.microphoneUnreachable, reporter)
        }
        let spotter: SpotterThread
        do {
            spotter = try SpotterThread(settings)
        } catch {
            logger.error("[wake] \(error)")
            return await failed(error.description, reporter)
        }
        defer { spotter.finish() }
        let events = AsyncStream<WakeSpotterEvent> { continuation in
            let task = Task {
                for await event in spotter.events {
                    switch event {
                    case .wake: continuation.yield(.wake)
                    case .decoded(let seconds): continuation.yield(.decoded(seconds: seconds))
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        let source: WakeWatch.Source =
            switch settings.source {
            case .glasses: .glasses
            case .host: .host(HostMicrophone.audio(logger: logger))
            }
        let watch = WakeWatch(
            session: session, spotter: spotter, events: events, phrase: spotter.phrase, source: source, reporter: reporter,
            logger: logger)
        logger.info("[wake] listening for \"\(spotter.phrase)\" on the \(settings.source == .host ? "host's" : "glasses'") microphone")
        await cancelWhenGracefulShutdown { await watch.run() }
        if settings.source == .glasses { try? await session.setListening(false) }
    }

    /// Manager1.Wake says `failed` and why; the rest of glassd goes on (a service that returns
    /// would stop it all).
    private func failed(_ why: String, _ reporter: BusWakeReporter) async {
        let phrase = (try? WakeSettings.normalized(settings.phrase)) ?? settings.phrase
        var status = WakeStatus(phrase: phrase, source: settings.source.rawValue, state: .failed)
        status.error = why
        await reporter.wakeChanged(status)
        try? await gracefulShutdown()
    }
}

extension SpotterThread: WakeSpotting {}

/// Manager1.Wake's PropertiesChanged, in order with glassd's other signals.
struct BusWakeReporter: WakeReporting {
    let connection: BusConnection
    let logger: Logger

    func wakeChanged(_ status: WakeStatus) async {
        connection.post { [logger] connection in
            do throws(BusError) {
                try connection.setProperty(
                    GlassdBus.Property.wake, to: WakeService.value(status), interface: GlassdBus.managerInterface,
                    at: GlassdBus.managerPath)
            } catch {
                logger.warning("cannot set Wake, ignoring: \(error)")
            }
        }
    }
}
