// SPDX-License-Identifier: GPL-2.0-or-later
import ArgumentParser
import DBusKit
import Foundation
import GlassdAPI
import GlassdContract

struct Update: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Update the paired glasses' components (firmware, a Monocle's FPGA image; and scripts) with one progress bar.",
        discussion: """
            Without files, glassd installs the images pinned in its firmware directory (manifest.toml, \
            see the README). Files given here are passed to glassd as open descriptors, so they may be \
            anywhere you can read. Each kind of glasses names its components (the paired glasses' \
            Components property lists them): --image NAME=FILE gives any of them; a FILE alone is the \
            firmware (a Halo's signed MCUboot image, which it boots for a test and glassd confirms once it \
            answers). Exits non-zero if the update fails or is cancelled.
            """)

    @OptionGroup var options: GlobalOptions

    @Option(help: "A firmware package (the .zip nrfutil makes; a Halo's signed MCUboot image, zephyr.signed.bin).")
    var firmware: String?

    @Argument(help: "A firmware file: short for --firmware FILE.")
    var file: String?

    @Option(help: "An FPGA image (.bin).")
    var fpga: String?

    @Option(name: .customLong("image"), help: "An image for a component, as Components names it: NAME=FILE (repeatable).")
    var images: [String] = []

    @Flag(help: "Install even if the versions match or the battery is low.")
    var force = false

    @Flag(help: "Print the recorded updates instead.")
    var history = false

    @Option(help: "How many updates --history prints.")
    var limit: UInt32 = 20

    /// One progress change (--json).
    struct Progress: Encodable {
        var job: String
        var status: String
        var percentage: UInt32
        var eta_seconds: Int?
        var error: String?
        var finished: Bool?
        var success: Bool?
        var message: String?
    }

    func run() async throws {
        try await reportingErrors {
            let client = try await options.connect()
            if history { return try await printHistory(client) }
            // In place before the call: a quick job's changes cannot come before we listen.
            let events = try await client.connection.subscribe(SignalMatch(sender: GlassdBus.name))
            var opened: [Int32] = []
            defer { for fd in opened { close(fd) } }
            func descriptor(_ path: String?) throws -> DBusValue? {
                guard let path else { return nil }
                let fd = open(path, O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else {
                    FileHandle.standardError.write(Data("glassctl: \(path): \(String(cString: strerror(errno)))\n".utf8))
                    throw ExitCode.failure
                }
                opened.append(fd)
                return .unixFD(fd)
            }
            // An image per component, by the name the glasses' Components give it.
            if file != nil && firmware != nil { throw ValidationError("Give the firmware once: FILE or --firmware.") }
            var files = [("firmware", firmware ?? file), ("fpga", fpga)]
            for image in images {
                guard let equals = image.firstIndex(of: "="), equals != image.startIndex else {
                    throw ValidationError("--image takes NAME=FILE, not \(image).")
                }
                files.append((String(image[..<equals]), String(image[image.index(after: equals)...])))
            }
            var chosen = GlassdBus.Manager1.UpdateOptions(force: force ? true : nil)
            for (component, path) in files { chosen.others[component] = try descriptor(path) }
            let job = try await client.manager.update(options: chosen)
            try await follow(job, events: events, client: client)
        }
    }

    /// Shows the job's progress until Finished; fails the command unless it succeeded.
    private func follow(_ job: String, events: SignalSubscription, client: Client) async throws {
        var shown = Progress(job: job, status: "checking", percentage: 0)
        let started = ContinuousClock.now
        func show() throws {
            if options.json {
                try printJSON(shown)
            } else {
                let width = 30
                let filled = Int(shown.percentage) * width / 100
                let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
                let eta = shown.eta_seconds.map { " ETA \($0 / 60):\(String(format: "%02d", $0 % 60))" } ?? ""
                print("\r[\(bar)] \(String(format: "%3d", shown.percentage))% \(shown.status)\(eta)\u{1B}[K", terminator: "")
            }
            fflush(nil)
        }
        try show()
        for await event in events {
            guard case .signal(let signal) = event, signal.path == job else { continue }
            if signal.member == "PropertiesChanged", let values = signal.arguments.dropFirst().first,
                let changed = try? GlassdBus.Job1.Properties(values)
            {
                var next = shown
                if let status = changed.status { next.status = status }
                if let p = changed.percentage { next.percentage = p }
                if let error = changed.error, !error.isEmpty { next.error = error }
                let elapsed = (ContinuousClock.now - started).components.seconds
                next.eta_seconds = next.percentage > 0 && next.percentage < 100
                    ? Int(elapsed) * Int(100 - next.percentage) / Int(next.percentage) : nil
                guard next.status != shown.status || next.percentage != shown.percentage || next.error != shown.error else {
                    continue
                }
                shown = next
                try show()
            } else if signal.interface == GlassdBus.jobInterface, signal.member == GlassdBus.Job.finished {
                guard let finished = try? GlassdBus.Job1.Finished(signal.arguments) else { continue }
                let (success, message) = (finished.success, finished.message)
                shown.finished = true
                shown.success = success
                shown.message = message
                shown.eta_seconds = nil
                if options.json {
                    try printJSON(shown)
                } else {
                    try show()
                    print()
                    print(message)
                }
                if !success { throw ExitCode.failure }
                return
            }
        }
        throw ClientError.glassdLeftDuringUpdate
    }

    private func printHistory(_ client: Client) async throws {
        guard case .array(_, let rows) = try await client.manager.updateHistory(limit: limit) else {
            throw ClientError.unexpectedReply("unexpected reply")
        }
        struct Row: Encodable {
            var time: String
            var device: String
            var from: String
            var to: String
            var success: Bool
            var error: String
        }
        let formatter = ISO8601DateFormatter()
        for case .structure(let fields) in rows where fields.count == 6 {
            guard case .uint64(let ms) = fields[0], case .bool(let success) = fields[5] else { continue }
            let row = Row(
                time: formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000)), device: fields[1].string ?? "",
                from: fields[2].string ?? "", to: fields[3].string ?? "", success: success, error: fields[4].string ?? "")
            if options.json {
                try printJSON(row)
            } else {
                print("\(row.time)  \(row.device)  \(success ? "ok    " : "FAILED")  \(row.from) → \(row.to)\(row.error.isEmpty ? "" : "  (\(row.error))")")
            }
        }
    }
}
