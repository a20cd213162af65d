// SPDX-License-Identifier: GPL-2.0-or-later
import ArgumentParser
import DBusKit
import Foundation
import GlassdAPI

struct AgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "Hand the glasses' voice to a TEN agent ([agent] in glassd.conf): start, stop, status, watch.",
        subcommands: [Start.self, Stop.self, Status.self, WatchTranscripts.self])

    /// One session as status prints it.
    struct Session: Encodable {
        var path: String
        var state: String
        var graph: String
        var channel: String
        var error: String
    }

    /// A transcript line as watch prints it (--json).
    struct Transcript: Encodable {
        var session: String
        var role: String
        var text: String
        var final: Bool
        var text_ts: UInt64
    }

    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start an agent session; taps on the glasses then talk to the agent. Prints the session's path.")

        @OptionGroup var options: GlobalOptions

        @Option(help: "The graph to start instead of [agent] graph.")
        var graph: String?

        func run() async throws {
            try await reportingErrors {
                let client = try await options.connect()
                var entries: [DBusValue.DictEntry] = []
                if let graph { entries.append(.init(.string("graph"), .variant(.string(graph)))) }
                let reply = try await client.call(
                    GlassdBus.Method.startAgent, [.dict(key: "s", value: "v", entries)], timeoutSeconds: 60)
                guard let path = reply.first?.string else { throw ClientError.unexpectedReply("no session in the reply") }
                if options.json {
                    try printJSON(try await AgentCommand.session(path, client))
                } else {
                    print(path)
                }
            }
        }
    }

    struct Stop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop the running agent session.")

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await reportingErrors {
                let client = try await options.connect()
                let sessions = try await AgentCommand.sessions(client)
                guard let running = sessions.last(where: { ["starting", "running", "stopping"].contains($0.state) }) else {
                    FileHandle.standardError.write(Data("glassctl: no agent session runs\n".utf8))
                    throw ExitCode.failure
                }
                _ = try await client.connection.call(
                    GlassdBus.name, path: running.path, interface: GlassdBus.agentInterface, member: GlassdBus.Agent.stop, [],
                    timeoutSeconds: 60)
                print("stopped \(running.path)")
            }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the agent sessions, oldest first.")

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await reportingErrors {
                let client = try await options.connect()
                let sessions = try await AgentCommand.sessions(client)
                if options.json { return try printJSON(sessions) }
                if sessions.isEmpty { print("no agent sessions") }
                for s in sessions {
                    print("\(s.path) \(s.state) graph=\(s.graph) channel=\(s.channel)\(s.error.isEmpty ? "" : " error: \(s.error)")")
                }
            }
        }
    }

    struct WatchTranscripts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "watch",
            abstract: "Print the agent sessions' states, then what is said in them as it is said and each state change, until interrupted.")

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await reportingErrors {
                let client = try await options.connect()
                let events = try await client.connection.subscribe(SignalMatch(sender: GlassdBus.name))
                func state(_ path: String, _ state: String) throws {
                    if options.json {
                        try printJSON(["session": path, "state": state])
                    } else {
                        print("\(path) \(state)")
                    }
                    fflush(nil)
                }
                // Where the sessions stand (subscribed already: nothing after this is missed), then what happens.
                for session in try await AgentCommand.sessions(client) { try state(session.path, session.state) }
                for await event in events {
                    guard case .signal(let signal) = event else { continue }
                    if signal.interface == GlassdBus.agentInterface, signal.member == GlassdBus.Agent.transcript {
                        let a = signal.arguments
                        guard a.count == 4, case .bool(let final) = a[2], case .uint64(let ts) = a[3] else { continue }
                        let line = Transcript(
                            session: signal.path, role: a[0].string ?? "", text: a[1].string ?? "", final: final, text_ts: ts)
                        if options.json {
                            try printJSON(line)
                        } else {
                            print("\(line.role)\(final ? "" : " …"): \(line.text)")
                        }
                    } else if signal.member == "PropertiesChanged", signal.arguments.first?.string == GlassdBus.agentInterface,
                        let changed = signal.arguments.dropFirst().first?.stringKeyed,
                        let now = changed[GlassdBus.Agent.state]?.unwrapped.string
                    {
                        try state(signal.path, now)
                    }
                    fflush(nil)
                }
            }
        }
    }

    static func sessions(_ client: Client) async throws -> [Session] {
        guard case .array(_, let paths) = try await client.property(GlassdBus.Property.agents) else { return [] }
        var sessions: [Session] = []
        for case .objectPath(let path) in paths { sessions.append(try await session(path, client)) }
        return sessions
    }

    static func session(_ path: String, _ client: Client) async throws -> Session {
        let reply = try await client.connection.call(
            GlassdBus.name, path: path, interface: "org.freedesktop.DBus.Properties", member: "GetAll",
            [.string(GlassdBus.agentInterface)])
        let values = reply.first?.stringKeyed ?? [:]
        func text(_ name: String) -> String { values[name]?.unwrapped.string ?? "" }
        return Session(
            path: path, state: text(GlassdBus.Agent.state), graph: text(GlassdBus.Agent.graph),
            channel: text(GlassdBus.Agent.channel), error: text(GlassdBus.Agent.error))
    }
}
