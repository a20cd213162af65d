// SPDX-License-Identifier: GPL-2.0-or-later
import ArgumentParser
import DBusKit
import Foundation
import GlassdAPI
import GlassdContract
import Synchronization

struct Query: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Ask a question; the answer prints as it streams.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The question.")
    var text: [String]

    @Option(help: "Seconds to wait for the answer (and, with --speak, its speech).")
    var timeout: Double = 120

    @Flag(help: "Speak the answer on the glasses' speaker too, when they have one (QueryWith speak).")
    var speak = false

    struct Output: Encodable {
        var query_id: String
        var answer: String
        /// The answer's kind and structure (AnswerTyped): text, list, table, link, place, number.
        var kind: String?
        var typed: [String: JSONValue]?
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
            // Each piece is printed when the next one comes, so an answer that came whole (a table,
            // say) can be laid out instead; a streamed answer still shows as it streams.
            async let printed: (any: Bool, held: String?, typed: TypedAnswerPrinting?) = {
                var any = false
                var held: String?
                var typed: TypedAnswerPrinting?
                for await signal in signals where signal.arguments.first?.string == queryID.withLock({ $0 }) {
                    if signal.member == GlassdBus.Signal.answerTyped, let answer = try? GlassdBus.Manager1.AnswerTyped(signal.arguments) {
                        typed = TypedAnswerPrinting(kind: answer.kind, fields: answer.answer)
                    }
                    guard signal.member == GlassdBus.Signal.answerDelta, streaming,
                        let piece = signal.arguments.dropFirst().first?.string
                    else { continue }
                    if let held {
                        FileHandle.standardOutput.write(Data(held.utf8))
                        any = true
                    }
                    held = piece
                }
                return (any, held, typed)
            }()
            let answer: String
            do {
                let sent: @Sendable (UInt64) -> Void = { cookie in
                    queryID.withLock { $0 = glassdQueryID(sender: unique, cookie: cookie) }
                }
                answer =
                    if speak {
                        try await client.manager.queryWith(
                            question: question, options: GlassdBus.Manager1.QueryOptions(speak: true), timeoutSeconds: timeout, sent: sent)
                    } else {
                        try await client.manager.query(text: question, timeoutSeconds: timeout, sent: sent)
                    }
            } catch {
                await client.connection.close()
                _ = await printed
                throw error
            }
            // Every delta came before the reply; closing ends the stream once they are printed.
            await client.connection.close()
            let shown = await printed
            if options.json {
                try printJSON(
                    Output(query_id: queryID.withLock { $0 } ?? "", answer: answer, kind: shown.typed?.kind, typed: shown.typed?.json))
            } else if !shown.any, let laidOut = shown.typed?.terminalText {
                print(laidOut)
            } else {
                FileHandle.standardOutput.write(Data((shown.any ? shown.held ?? "" : answer).utf8))
                print("")
            }
        }
    }
}
