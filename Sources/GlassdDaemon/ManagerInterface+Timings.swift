// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import GlassdAPI
import GlassdContract
import Logging
import Storage

extension ManagerInterface {
    /// Manager1.TurnTimings: the latest turns' stages, oldest first.
    func turnTimings(_ call: MethodCall) async throws -> [DBusValue] {
        let limit = Int(min(call.arguments.first?.uint32 ?? 0, UInt32(SQLiteTurnTimingStore.defaultKept)))
        let turns: [SQLiteTurnTimingStore.Turn]
        do {
            turns = try await turnTimingStore?.recent(limit) ?? []
        } catch {
            logger.error("turn timings cannot be read: \(error)")
            throw ErrorMapping.busError(StoreFailure.historyUnreadable)
        }
        let rows = turns.map { turn in
            DBusValue.structure([
                .string(turn.queryID), .uint64(UInt64(max(0, turn.at))),
                .dict(key: "s", value: "v", turn.stages.sorted { $0.key < $1.key }.map { .init(.string($0.key), .variant(.uint64(UInt64(max(0, $0.value))))) }),
            ])
        }
        return [.array(element: "(sta{sv})", rows)]
    }
}

extension GlassdBus.Manager1.TurnStages {
    /// From a timeline's stages (microseconds, never negative on the bus); a stage this glassd's
    /// contract does not name is carried as it is.
    init(_ stages: [String: Int64]) {
        self.init()
        try? self = Self(from: stages.mapValues { .uint64(UInt64(max(0, $0))) })
    }
}

