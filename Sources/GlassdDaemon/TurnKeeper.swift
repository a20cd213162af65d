// SPDX-License-Identifier: GPL-2.0-or-later
import Logging
import Product
import ServiceLifecycle
import Storage

/// Each turn's timeline, kept off the answer's path: `keep` only queues it (the reply to a typed
/// Query does not wait for a database write, which a slow disk would make long), and the service
/// writes them in order, then signals TurnTimed, so a desktop sees where a turn's time went as it
/// ends and finds it again by its query id. At most `bound` wait (more means the database is stuck: the
/// newest are dropped and logged); on shutdown what waits is written first.
final class TurnKeeper: TurnRecords, Service {
    struct Entry: Sendable {
        let queryID: String
        let unixMS: Int64
        let stages: [String: Int64]
    }

    private let entries: AsyncStream<Entry>
    private let sink: AsyncStream<Entry>.Continuation
    private let store: SQLiteTurnTimingStore
    private let signals: ManagerSignals
    private let logger: Logger

    init(store: SQLiteTurnTimingStore, signals: ManagerSignals, logger: Logger, bound: Int = 256) {
        (entries, sink) = AsyncStream.makeStream(bufferingPolicy: .bufferingOldest(bound))
        self.store = store
        self.signals = signals
        self.logger = logger
    }

    func keep(queryID: String, at unixMS: Int64, stages: [String: Int64]) async throws {
        if case .dropped = sink.yield(Entry(queryID: queryID, unixMS: unixMS, stages: stages)) {
            logger.warning("a turn's timings were not kept: too many wait for the database", metadata: ["query_id": "\(queryID)"])
        }
    }

    func run() async {
        await withGracefulShutdownHandler {
            for await entry in entries {
                do {
                    try await store.keep(queryID: entry.queryID, at: entry.unixMS, stages: entry.stages)
                    signals.turnTimed(entry.queryID, entry.stages)
                } catch {
                    logger.warning("the turn's timings could not be kept: \(error)", metadata: ["query_id": "\(entry.queryID)"])
                }
            }
        } onGracefulShutdown: { [sink] in
            sink.finish()
        }
    }
}
