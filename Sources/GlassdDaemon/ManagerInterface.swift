// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import GlassdAPI
import GlassdCore
import Logging
import Storage

/// org.glassd.Manager1 on /org/glassd: questions, history and mode over D-Bus.
struct ManagerInterface {
    /// History(limit) never returns more than this many messages.
    static let maxHistory: UInt32 = 10_000

    let connection: BusConnection
    let assistant: Assistant
    let archive: HistoryArchive
    let mode: ModeSetting
    let backendDescription: String
    let logger: Logger
    /// The glasses link's members (Pair, Unpair, Scan, PairedDevice, State).
    let link: LinkInterface?

    var spec: InterfaceSpec {
        InterfaceSpec(
            name: GlassdBus.managerInterface,
            methods: [
                .init("Query", input: [("text", "s")], output: [("answer", "s")]) { try await query($0) },
            ] + historyMethods + (link?.methods ?? unavailableLinkMethods),
            properties: [
                .init(GlassdBus.Property.version, .string(glassdVersion), change: .constant),
                .init(GlassdBus.Property.mode, .string(mode.mode.rawValue)) { [mode, logger] value in
                    guard let text = value.string, let newMode = Mode(rawValue: text) else {
                        let choices = Mode.allCases.map(\.rawValue).joined(separator: ", ")
                        throw BusError.invalidArgs("Mode must be one of: \(choices).")
                    }
                    mode.mode = newMode
                    logger.info("mode changed", metadata: ["mode": "\(newMode.rawValue)"])
                },
                .init(GlassdBus.Property.backend, .string(backendDescription), change: .constant),
            ] + (link?.properties ?? LinkInterface.initialProperties),
            signals: [
                .init(GlassdBus.Signal.answerDelta, [("query_id", "s"), ("text", "s")]),
                .init(GlassdBus.Signal.answered, [("query_id", "s"), ("question", "s"), ("answer", "s")]),
                .init(GlassdBus.Signal.queryFailed, [("query_id", "s"), ("error_name", "s"), ("message", "s")]),
            ])
    }

    /// Without a system bus there is no BlueZ: the link methods say so.
    private var unavailableLinkMethods: [InterfaceSpec.Method] {
        let noBluetooth: @Sendable (MethodCall) async throws -> [DBusValue] = { _ in
            throw BusError(name: GlassdErrorName.noAdapter, message: "Bluetooth is not available: no system bus.")
        }
        return [
            .init("Pair", input: [("address", "s")], output: [("device", "o")], handler: noBluetooth),
            .init("Unpair", handler: noBluetooth),
            .init("Scan", input: [("seconds", "u")], output: [("devices", "a(ssn)")], handler: noBluetooth),
        ]
    }

    /// Queued, not awaited: the bus thread sends signals in order, and before the method's reply.
    private func emit(_ signal: String, _ arguments: [DBusValue]) {
        connection.post(signal, interface: GlassdBus.managerInterface, at: GlassdBus.managerPath, arguments) {
            [logger] error in logger.warning("cannot emit \(signal), ignoring: \(error)")
        }
    }

    private func query(_ call: MethodCall) async throws -> [DBusValue] {
        let text = call.arguments.first?.string ?? ""
        let id = glassdQueryID(sender: call.sender, cookie: call.cookie)
        var log = logger
        log[metadataKey: "query_id"] = "\(id)"
        log.debug("query", metadata: ["text": "\(text)"])
        do {
            let answer = try await assistant.ask(text, queryID: id, mode: mode.mode) { piece in
                emit(GlassdBus.Signal.answerDelta, [.string(id), .string(piece)])
            }
            emit(GlassdBus.Signal.answered, [.string(id), .string(text), .string(answer)])
            log.info("answered", metadata: ["answer_chars": "\(answer.count)"])
            return [.string(answer)]
        } catch {
            let busError = ErrorMapping.busError(error)
            emit(GlassdBus.Signal.queryFailed, [.string(id), .string(busError.name), .string(busError.message)])
            log.notice("query failed", metadata: ["error": "\(busError.name)", "reason": "\(busError.message)"])
            throw busError
        }
    }
}
