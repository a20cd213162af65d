// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
@testable import GlassdDaemon
import Storage
import Testing

/// Each refusal glassd makes itself, with the name and message its callers have always seen:
/// written out in full here, so a change of either on the bus shows.
@Suite("Errors become D-Bus errors in one place", .timeLimit(.minutes(5)))
struct ErrorMappingTests {
    static let failed = "org.freedesktop.DBus.Error.Failed"
    static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"

    static let cases: [(any Error, String, String)] = [
        (ManagerRefusal.agentHoldsMode, "org.glassd.Error.Busy", "An agent session runs: stop it to change the mode."),
        (ManagerRefusal.unknownMode(choices: "a, b"), invalidArgs, "Mode must be one of: a, b."),
        (ManagerRefusal.noAnswerKept(queryID: "q/1"), "org.glassd.Error.NotFound", "No answer is kept for the question \"q/1\"."),
        (ManagerRefusal.noPhotoKept(queryID: "glasses/2"), "org.glassd.Error.NotFound", "No photo is kept for the question \"glasses/2\"."),
        (ManagerRefusal.notADescriptor, invalidArgs, "Expected an open file descriptor."),
        (StoreFailure.historyUnreadable, failed, "The history could not be read."),
        (StoreFailure.historyUnwritable, failed, "The history could not be read or written."),
        (StoreFailure.historyNotCleared, failed, "Could not clear the conversation history."),
        (StoreFailure.photosUnreadable, failed, "The photos could not be read."),
        (HistoryError.invalidQuery("no words"), invalidArgs, "no words"),
        (HistoryError.badLine(3, "not JSON"), invalidArgs, "Line 3: not JSON; nothing was imported."),
        (HistoryError.badDescriptor("closed"), invalidArgs, "closed"),
        (HistoryError.tooLarge("too big"), invalidArgs, "too big"),
        (HistoryError.busy("one at a time"), "org.glassd.Error.Busy", "one at a time"),
        (HistoryError.stalled("took nothing"), "org.glassd.Error.Timeout", "took nothing"),
        // The database's own words stay in the log.
        (HistoryError.failed("disk I/O error at /var/lib"), failed, "The history could not be read or written."),
        (GlassesRefusal.updating, "org.glassd.Error.Busy", "The glasses are being updated."),
        (GlassesRefusal.notThePairedGlasses, "org.glassd.Error.NotConnected", "These glasses are not paired."),
        (GlassesRefusal.wentAway("the link closed"), "org.glassd.Error.NotConnected", "The glasses went away: the link closed"),
        (GlassesRefusal.noBluetooth, "org.glassd.Error.NoAdapter", "Bluetooth is not available: no system bus."),
        (GlassesRefusal.textTooLong(maxBytes: 4096), invalidArgs, "Display takes at most 4096 bytes of text."),
        (
            AgentStartRefusal.noServer, "org.glassd.Error.NotConfigured",
            "No agent server is configured: set [agent] base_url in glassd.conf to a TEN agent server."
        ),
        (AgentStartRefusal.sessionRuns, "org.glassd.Error.Busy", "An agent session runs already: stop it first."),
        (AgentStartRefusal.optionsNotADictionary, invalidArgs, "StartAgent takes a{sv} options."),
        (AgentStartRefusal.badGraph, invalidArgs, "graph must be a non-empty string (s)."),
        (AgentStartRefusal.unknownOption("voice"), invalidArgs, "Unknown option voice: StartAgent takes graph."),
        (ManagerRefusal.unknownQueryOption("loud"), invalidArgs, "Unknown option loud: QueryWith takes speak (b)."),
        (ManagerRefusal.badQueryOptions, invalidArgs, "QueryWith's options are an a{sv}: speak (b)."),
        (AuthorizationRefusal.unknownCaller, accessDenied, "Cannot tell who is calling."),
        (
            AuthorizationRefusal.polkitSilent(action: "org.glassd.manage"), accessDenied,
            "Authorization is not available (polkit does not answer): org.glassd.manage."
        ),
        (
            AuthorizationRefusal.polkitUnreadable(action: "org.glassd.manage"), accessDenied,
            "polkit gave an answer glassd cannot read: org.glassd.manage."
        ),
        (
            AuthorizationRefusal.needsAuthentication(action: "org.glassd.update"),
            "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired", "Interactive authentication required: org.glassd.update."
        ),
        (AuthorizationRefusal.notAuthorized(action: "org.glassd.update"), accessDenied, "Not authorized: org.glassd.update."),
    ]

    @Test("every refusal of glassd's own has its name and message on the bus, also through the mapping of any error")
    func refusals() {
        for (error, name, message) in Self.cases {
            #expect(ErrorMapping.busError(for: error) == BusError(name: name, message: message), "\(error)")
        }
    }

    @Test("StartAgent's options: a{sv} with a non-empty graph only")
    func agentOptions() throws {
        #expect(try AgentService.graph(in: nil, default: "voice") == "voice")
        let graph = DBusValue.dict(key: "s", value: "v", [.init(.string("graph"), .variant(.string("camera")))])
        #expect(try AgentService.graph(in: graph, default: "voice") == "camera")
        #expect(throws: AgentStartRefusal.optionsNotADictionary) { try AgentService.graph(in: .string("x"), default: "voice") }
        let empty = DBusValue.dict(key: "s", value: "v", [.init(.string("graph"), .variant(.string("")))])
        #expect(throws: AgentStartRefusal.badGraph) { try AgentService.graph(in: empty, default: "voice") }
        let unknown = DBusValue.dict(key: "s", value: "v", [.init(.string("voice"), .variant(.bool(true)))])
        #expect(throws: AgentStartRefusal.unknownOption("voice")) { try AgentService.graph(in: unknown, default: "voice") }
    }
}
