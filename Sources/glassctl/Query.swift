// SPDX-License-Identifier: GPL-2.0-or-later
import ArgumentParser
import DBusKit
import Foundation
import GlassdAPI
import Synchronization

struct Query: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Ask a question; the answer prints as it streams.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The question.")
    var text: [String]

    @Option(help: "Seconds to wait for the answer.")
    var timeout: Double = 120

    struct Output: Encodable {
        var query_id: String
        var answer: String
    }

    func run() async throws {
        try await reportingErrors {
            let client = try await options.connect()
            let question = text.joined(separator: " ")
            // Subscribe before asking, so no piece of the answer can slip past.
            let signals = try await client.managerSignals()
            let unique = try await client.connection.uniqueName()
            let queryID = Mutex<String?>(nil)
            let streaming = !options.json
            async let printed: Bool = {
                var any = false
                for await signal in signals where signal.member == GlassdBus.Signal.answerDelta {
                    guard streaming, signal.arguments.first?.string == queryID.withLock({ $0 }),
                        let piece = signal.arguments.dropFirst().first?.string
                    else { continue }
                    FileHandle.standardOutput.write(Data(piece.utf8))
                    any = true
                }
                return any
            }()
            let reply: [DBusValue]
            do {
                reply = try await client.call(GlassdBus.Method.query, [.string(question)], timeoutSeconds: timeout) { cookie in
                    queryID.withLock { $0 = glassdQueryID(sender: unique, cookie: cookie) }
                }
            } catch {
                await client.connection.close()
                _ = await printed
                throw error
            }
            // Every delta came before the reply; closing ends the stream once they are printed.
            await client.connection.close()
            let answer = reply.first?.string ?? ""
            if options.json {
                _ = await printed
                try printJSON(Output(query_id: queryID.withLock { $0 } ?? "", answer: answer))
            } else {
                if !(await printed) { FileHandle.standardOutput.write(Data(answer.utf8)) }
                print("")
            }
        }
    }
}
