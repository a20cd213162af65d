// SPDX-License-Identifier: GPL-2.0-or-later
import AnswerModel
import AssistantEngine
import DBusKit
import GlassdAPI
import GlassdContract
import Logging
import Product
import Storage
import Wake

/// org.glassd.Manager1 on /org/glassd: questions, history and mode over D-Bus.
struct ManagerInterface {
    /// History(limit) never returns more than this many messages.
    static let maxHistory: UInt32 = 10_000

    let signals: ManagerSignals
    let assistant: Assistant
    let archive: HistoryArchive
    let typedAnswers: SQLiteTypedAnswerStore
    let photos: PhotoStore
    let mode: ModeSetting
    /// False with the embedded default backend: scene mode is refused.
    let sees: Bool
    let backendDescription: String
    /// `local-only` or `cloud` ([privacy] local_only).
    let privacy: String
    /// TokensUsed at start, as stored; the assistant reports each change (ManagerSignals.tokensUsed).
    let tokensUsed: Int64
    let logger: Logger
    /// The glasses link's members (Pair, Unpair, Scan, PairedDevice, State).
    let link: LinkInterface?
    /// Update and UpdateHistory.
    let updateMethods: [InterfaceSpec.Method]
    /// StartAgent and Agents.
    let agents: AgentService
    /// `[wake]`, for Manager1.Wake's first value.
    let wake: WakeSettings?
    /// How answers are spoken (QueryWith's speak); nil: never.
    var speech: SpeechOut? = nil
    /// Whether a typed question of this caller (its bus name) may show on the glasses: writing
    /// on them is Display's, which not every caller may use.
    var mayShowOnGlasses: @Sendable (String) async -> Bool = { _ in true }
    /// Each turn's timeline (TurnTimings); nil: none kept.
    var turnTimingStore: SQLiteTurnTimingStore? = nil
    /// Where a typed question's timeline goes; nil: nowhere.
    var turns: (any TurnRecords)? = nil

    var spec: InterfaceSpec { spec(adding: NotificationInterface(desk: nil, logger: logger)) }

    /// With the notifications' and display's members.
    func spec(adding notifications: NotificationInterface) -> InterfaceSpec {
        typealias Manager1 = GlassdBus.Manager1
        return Manager1.spec(
            methods: [
                Manager1.Query.method { try await query($0, speak: false) },
                Manager1.QueryWith.method { try await queryWith($0) },
                Manager1.Photo.method { try await photo($0) },
                Manager1.AnswerOf.method { try await answerOf($0) },
                Manager1.TurnTimings.method { try await turnTimings($0) },
            ] + historyMethods + (link?.methods ?? unavailableLinkMethods) + updateMethods + [agents.startMethod]
                + notifications.methods,
            properties: [
                Manager1.PropertySpec.version(glassdVersion),
                Manager1.PropertySpec.mode(mode.mode.rawValue) { [mode, sees, logger, agents] value in
                    if agents.isActive {
                        throw ErrorMapping.busError(ManagerRefusal.agentHoldsMode)
                    }
                    guard let text = value.string, let newMode = Mode(rawValue: text) else {
                        let choices = Mode.allCases.map(\.rawValue).joined(separator: ", ")
                        throw ErrorMapping.busError(ManagerRefusal.unknownMode(choices: choices))
                    }
                    if newMode == .scene && !sees { throw ErrorMapping.busError(VoiceFailure.cannotSee) }
                    mode.mode = newMode
                    logger.info("mode changed", metadata: ["mode": "\(newMode.rawValue)"])
                },
                Manager1.PropertySpec.backend(backendDescription),
                Manager1.PropertySpec.privacy(privacy),
                Manager1.PropertySpec.tokensUsed(UInt64(clamping: tokensUsed)),
                agents.agentsProperty,
                WakeService.property(wake),
            ] + (link?.properties ?? LinkInterface.initialProperties) + NotificationInterface.initialProperties)
    }

    /// Without a system bus there is no BlueZ: the link methods say so.
    private var unavailableLinkMethods: [InterfaceSpec.Method] {
        let noBluetooth: @Sendable (MethodCall) async throws -> [DBusValue] = { _ in
            throw ErrorMapping.busError(GlassesRefusal.noBluetooth)
        }
        let link: [any ContractMethod.Type] = [GlassdBus.Manager1.Pair.self, GlassdBus.Manager1.Unpair.self, GlassdBus.Manager1.Scan.self]
        return link.map { $0.method(noBluetooth) }
    }

    /// A typed question: answered to the caller, and shown on the glasses too when they are idle
    /// (Product's TypedQuestions), spoken with `speak`; here only its arguments, its id and its
    /// error's D-Bus name.
    private func query(_ call: MethodCall, speak: Bool) async throws -> [DBusValue] {
        let text = call.arguments.first?.string ?? ""
        let id = glassdQueryID(sender: call.sender, cookie: call.cookie)
        let questions = TypedQuestions(
            assistant: assistant, session: link?.session, signals: signals, mode: mode, speech: speech, logger: logger,
            turns: turns)
        let sender = call.sender
        do {
            let reply = try await questions.ask(text, id: id, speak: speak) { [mayShowOnGlasses] in await mayShowOnGlasses(sender) }
            return [.string(reply.text)]
        } catch {
            let busError = ErrorMapping.busError(error)
            logger.notice(
                "query failed", metadata: ["query_id": "\(id)", "error": "\(busError.name)", "reason": "\(busError.message)"])
            throw busError
        }
    }

    /// QueryWith: Query with options (dbus/org.glassd.Manager1.xml's keys: `speak`).
    private func queryWith(_ call: MethodCall) async throws -> [DBusValue] {
        let options: GlassdBus.Manager1.QueryOptions
        do throws(ContractError) {
            options = try GlassdBus.Manager1.QueryOptions(call.arguments.dropFirst().first ?? .dict(key: "s", value: "v", []))
        } catch {
            let refusal: ManagerRefusal =
                switch error {
                case .unknownKey(let name, _, _): .unknownQueryOption(name)
                case .wrongType, .missingArgument: .badQueryOptions
                }
            throw ErrorMapping.busError(refusal)
        }
        return try await query(call, speak: options.speak ?? false)
    }

    /// An answer's structure by its query id: the typed form kept for it, else its text from
    /// History as one text part.
    private func answerOf(_ call: MethodCall) async throws -> [DBusValue] {
        let id = call.arguments.first?.string ?? ""
        do {
            let kind: String
            var fields: TypedAnswerBus.Fields
            // Cut as it was spoken: what was said, as text (its typed form is the whole answer's).
            if try await archive.answerWasCut(queryID: id), let text = try await archive.answerText(queryID: id) {
                (kind, fields) = ("text", TypedAnswerBus.fields(TypedAnswer.text(text), answeredBy: nil))
                fields.cut = true
            } else if let typed = try await typedAnswers.load(queryID: id) {
                (kind, fields) = (typed.answer.kind, TypedAnswerBus.fields(typed.answer, answeredBy: typed.answeredBy))
            } else if let text = try await archive.answerText(queryID: id) {
                let answer = TypedAnswer.text(text)
                (kind, fields) = (answer.kind, TypedAnswerBus.fields(answer, answeredBy: nil))
            } else {
                throw ErrorMapping.busError(ManagerRefusal.noAnswerKept(queryID: id))
            }
            if let turn = try await turnTimingStore?.turn(queryID: id) {
                fields.timings = GlassdBus.Manager1.TurnStages(turn.stages)
            }
            return [.string(kind), fields.busValue]
        } catch let error as BusError {
            throw error
        } catch {
            logger.error("cannot read the answer of \(id): \(error)")
            throw ErrorMapping.busError(StoreFailure.historyUnreadable)
        }
    }

    /// The photo a question from the glasses was asked about, as a descriptor.
    private func photo(_ call: MethodCall) async throws -> [DBusValue] {
        let id = call.arguments.first?.string ?? ""
        let fd: Int32?
        do {
            fd = try await photos.open(queryID: id)
        } catch {
            logger.error("cannot read the photos: \(error)")
            throw ErrorMapping.busError(StoreFailure.photosUnreadable)
        }
        guard let fd else { throw ErrorMapping.busError(ManagerRefusal.noPhotoKept(queryID: id)) }
        return [.unixFD(fd)]
    }
}
