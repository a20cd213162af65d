// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import GlassdAPI
import GlassdCore
import Logging
import Product

/// The signals of org.glassd.Manager1 about questions, from D-Bus and from the glasses alike.
/// Posted, not awaited: the bus thread sends them in order, and before the method's reply.
struct ManagerSignals: QueryEvents {
    let connection: BusConnection
    let logger: Logger

    func answerDelta(_ id: String, _ text: String) {
        post(GlassdBus.Signal.answerDelta, [.string(id), .string(text)])
    }

    func answered(_ id: String, question: String, answer: String) {
        post(GlassdBus.Signal.answered, [.string(id), .string(question), .string(answer)])
    }

    func answerTyped(_ id: String, _ reply: AssistantReply) {
        post(GlassdBus.Signal.answerTyped, [
            .string(id), .string(reply.typed.kind), TypedAnswerBus.dictionary(reply.typed, answeredBy: reply.answeredBy),
        ])
    }

    func failed(_ id: String, _ error: any Error) {
        let error = ErrorMapping.busError(for: error)
        post(GlassdBus.Signal.queryFailed, [.string(id), .string(error.name), .string(error.message)])
    }

    func transcribed(_ id: String, _ text: String) {
        post(GlassdBus.Signal.transcribed, [.string(id), .string(text)])
    }

    /// Scene mode: frame `number` and what became of it (sent, dark, blurry, unchanged, busy, error).
    func sceneFrame(_ number: UInt32, _ verdict: String) {
        post(GlassdBus.Signal.sceneFrame, [.uint32(number), .string(verdict)])
    }

    /// Scene mode: the hazard state changed ("CAUTION <hazard> <direction>" or "CLEAR").
    func alert(_ text: String) {
        post(GlassdBus.Signal.alert, [.string(text)])
    }

    /// The current conversation's token count changed: TokensUsed, and its PropertiesChanged,
    /// queued in order with the signals, so a Query's reply finds it set.
    func tokensUsed(_ used: Int64) {
        connection.post { [logger] connection in
            do throws(BusError) {
                try connection.setProperty(
                    GlassdBus.Property.tokensUsed, to: .uint64(UInt64(clamping: used)),
                    interface: GlassdBus.managerInterface, at: GlassdBus.managerPath)
            } catch {
                logger.warning("cannot set TokensUsed, ignoring: \(error)")
            }
        }
    }

    private func post(_ signal: String, _ arguments: [DBusValue]) {
        let arguments = arguments.map { argument -> DBusValue in
            if case .string(let text) = argument { .string(text.busSafe) } else { argument }
        }
        connection.post(signal, interface: GlassdBus.managerInterface, at: GlassdBus.managerPath, arguments) {
            [logger] error in logger.warning("cannot emit \(signal), ignoring: \(error)")
        }
    }
}
