// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import Logging
import Product
import ServiceLifecycle
import Storage

/// Stores the mode whenever it changes, and once more on the way out, so a restart keeps it.
struct SettingsService: Service, CustomStringConvertible {
    /// What service-lifecycle logs: the name, not a dump of everything the service holds.
    var description: String { "SettingsService" }

    static let modeKey = "mode"

    let mode: ModeSetting
    let store: SQLiteSettingsStore
    let logger: Logger

    /// The stored mode, or assistant.
    static func storedMode(_ store: SQLiteSettingsStore, logger: Logger) async -> Mode {
        do {
            return try await store.value(modeKey).flatMap(Mode.init(rawValue:)) ?? .assistant
        } catch {
            logger.error("cannot read the stored mode, using assistant: \(error)")
            return .assistant
        }
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            for await latest in mode.changes { await save(latest) }
        }
        await save(mode.mode)
    }

    private func save(_ value: Mode) async {
        do {
            try await store.set(Self.modeKey, to: value.rawValue)
        } catch {
            logger.error("cannot store the mode, ignoring: \(error)")
        }
    }
}
