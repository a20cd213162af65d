// SPDX-License-Identifier: GPL-2.0-or-later
import ArgumentParser
import DBusKit
import Foundation
import GlassdAPI
import GlassdContract

struct Photo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Save the photo a question from the glasses was asked about (its query id is in history and watch).")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The question's query id (glasses/...).")
    var queryID: String

    @Argument(help: "Where to save the JPEG (- for standard output).")
    var file: String

    func run() async throws {
        try await reportingErrors {
            let source = try await options.connect().manager.photo(queryID: queryID)
            guard source >= 0 else { throw ClientError.unexpectedReply("no descriptor in the reply") }
            defer { close(source) }
            let target = file == "-" ? 1 : open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard target >= 0 else {
                FileHandle.standardError.write(Data("glassctl: \(file): \(String(cString: strerror(errno)))\n".utf8))
                throw ExitCode.failure
            }
            defer { if file != "-" { close(target) } }
            let bytes = try copy(from: source, to: target)
            if options.json { try printJSON(["query_id": queryID, "file": file, "bytes": String(bytes)]) }
        }
    }

    private func copy(from source: Int32, to target: Int32) throws -> Int {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var total = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw ClientError.localIO("reading the photo: \(String(cString: strerror(errno)))") }
            if n == 0 { return total }
            var written = 0
            while written < n {
                let m = buffer.withUnsafeBytes { write(target, $0.baseAddress! + written, n - written) }
                if m < 0 && errno == EINTR { continue }
                guard m > 0 else { throw ClientError.localIO("writing \(file): \(String(cString: strerror(errno)))") }
                written += m
            }
            total += n
        }
    }
}
