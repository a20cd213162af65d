// SPDX-License-Identifier: GPL-2.0-or-later
import AssistantEngine
import DBusKit
import GlassdAPI
import GlassdContract
import Glibc
import Logging
import Storage

/// Manager1's history members: the last messages, search, export, import, clearing.
extension ManagerInterface {
    var historyMethods: [InterfaceSpec.Method] {
        [
            GlassdBus.Manager1.History.method { try await history($0) },
            GlassdBus.Manager1.SearchHistory.method { try await searchHistory($0) },
            GlassdBus.Manager1.ExportHistory.method { try await exportHistory($0) },
            GlassdBus.Manager1.ImportHistory.method { try await importHistory($0) },
            GlassdBus.Manager1.ClearHistory.method { _ in try await clearHistory() },
        ]
    }

    private func history(_ call: MethodCall) async throws -> [DBusValue] {
        let limit = min(call.arguments.first?.uint32 ?? 0, Self.maxHistory)
        return rows(try await mapped { () throws(HistoryError) in try await archive.recent(limit: Int(limit)) })
    }

    private func searchHistory(_ call: MethodCall) async throws -> [DBusValue] {
        let words = call.arguments.first?.string ?? ""
        let limit = min(call.arguments.dropFirst().first?.uint32 ?? 0, Self.maxHistory)
        return rows(try await mapped { () throws(HistoryError) in try await archive.search(words, limit: Int(limit)) })
    }

    private func exportHistory(_ call: MethodCall) async throws -> [DBusValue] {
        let fd = try descriptor(call)
        defer { close(fd) }
        try await mapped { () throws(HistoryError) in try await archive.export(to: fd) }
        logger.info("history exported")
        return []
    }

    private func importHistory(_ call: MethodCall) async throws -> [DBusValue] {
        let fd = try descriptor(call)
        defer { close(fd) }
        let added = try await mapped { () throws(HistoryError) in try await archive.importMessages(from: fd) }
        logger.info("history imported", metadata: ["messages": "\(added)"])
        return [.uint32(UInt32(clamping: added))]
    }

    private func clearHistory() async throws -> [DBusValue] {
        do {
            try await assistant.clearHistory()
            try await photos.clear()
        } catch {
            logger.error("cannot clear history: \(error)")
            throw ErrorMapping.busError(StoreFailure.historyNotCleared)
        }
        logger.info("history cleared")
        return []
    }

    /// The descriptor argument, which this handler owns from here (DBusKit passed a copy).
    private func descriptor(_ call: MethodCall) throws(BusError) -> Int32 {
        guard case .unixFD(let fd) = call.arguments.first, fd >= 0 else {
            throw ErrorMapping.busError(ManagerRefusal.notADescriptor)
        }
        return fd
    }

    private func rows(_ messages: [StoredMessage]) -> [DBusValue] {
        let rows = messages.map { m in
            DBusValue.structure([.int64(m.createdAt), .string(m.queryID), .string(m.role.rawValue), .string(m.text)])
        }
        return [.array(element: "(xsss)", rows)]
    }

    /// Runs `body`, its failure logged as fits and mapped to the D-Bus error callers expect.
    private func mapped<T>(_ body: () async throws(HistoryError) -> T) async throws(BusError) -> T {
        do {
            return try await body()
        } catch {
            switch error {
            case .stalled: logger.notice("history export stopped: its reader took nothing")
            case .failed(let why): logger.error("history failed: \(why)")
            case .invalidQuery, .badLine, .badDescriptor, .tooLarge, .busy: break
            }
            throw ErrorMapping.busError(error)
        }
    }
}
