// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import AssistantEngine
import DBusKit
import GlassdAPI
import GlassdContract
import Logging
import Product

/// The signals of org.glassd.Manager1 about questions, from D-Bus and from the glasses alike.
/// Posted, not awaited: the bus thread sends them in order, and before the method's reply.
struct ManagerSignals: QueryEvents {
    private typealias Manager1 = GlassdBus.Manager1
    let connection: BusConnection
    let logger: Logger

    func answerDelta(_ id: String, _ text: String) {
        post(GlassdBus.Signal.answerDelta, Manager1.AnswerDelta(queryID: id, text: text).values)
    }

    func answered(_ id: String, question: String, answer: String) {
        post(GlassdBus.Signal.answered, Manager1.Answered(queryID: id, question: question, answer: answer).values)
    }

    func answerTyped(_ id: String, _ reply: AssistantReply) {
        post(
            GlassdBus.Signal.answerTyped,
            Manager1.AnswerTyped(
                queryID: id, kind: reply.typed.kind, answer: TypedAnswerBus.fields(reply.typed, answeredBy: reply.answeredBy)
            ).values)
    }

    func failed(_ id: String, _ error: any Error) {
        let error = ErrorMapping.busError(for: error)
        post(GlassdBus.Signal.queryFailed, Manager1.QueryFailed(queryID: id, errorName: error.name, message: error.message).values)
    }

    func transcribed(_ id: String, _ text: String) {
        post(GlassdBus.Signal.transcribed, Manager1.Transcribed(queryID: id, text: text).values)
    }

    /// A turn's timeline, kept: its stages in microseconds from its start.
    func turnTimed(_ id: String, _ stages: [String: Int64]) {
        post(GlassdBus.Signal.turnTimed, Manager1.TurnTimed(queryID: id, stages: Manager1.TurnStages(stages)).values)
    }

    /// Scene mode: frame `number` and what became of it (sent, dark, blurry, unchanged, busy, error).
    func sceneFrame(_ number: UInt32, _ verdict: String) {
        post(GlassdBus.Signal.sceneFrame, Manager1.SceneFrame(frame: number, verdict: verdict).values)
    }

    /// Scene mode: the hazard state changed ("CAUTION <hazard> <direction>" or "CLEAR").
    func alert(_ text: String) {
        post(GlassdBus.Signal.alert, Manager1.Alert(text: text).values)
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
