// SPDX-License-Identifier: GPL-2.0-or-later
import CSystemd
import Foundation
import Logging

/// swift-log to the journal with priorities and structured fields (`GLASSD_*` from metadata);
/// outside systemd, one line per entry on stderr.
public struct JournalLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    private let label: String
    private let toJournal: Bool

    public init(label: String, level: Logger.Level, toJournal: Bool) {
        self.label = label
        self.logLevel = level
        self.toJournal = toJournal
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        if toJournal {
            var fields = [
                "MESSAGE=\(event.message)", "PRIORITY=\(Self.priority(event.level))", "SYSLOG_IDENTIFIER=glassd",
                "CODE_FILE=\(event.file)", "CODE_LINE=\(event.line)", "CODE_FUNC=\(event.function)",
            ]
            for (key, value) in all { fields.append("GLASSD_\(Self.fieldName(key))=\(value)") }
            Self.send(fields)
        } else {
            let extra = all.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
            FileHandle.standardError.write(Data("glassd[\(event.level)]: \(event.message)\(extra)\n".utf8))
        }
    }

    private static func send(_ fields: [String]) {
        // Each field is copied into memory that stays put until sd_journal_sendv returns.
        let copies = fields.map { field -> UnsafeMutableRawBufferPointer in
            let bytes = Array(field.utf8)
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
            copy.copyBytes(from: bytes)
            return copy
        }
        defer { copies.forEach { $0.deallocate() } }
        let vectors = copies.map { iovec(iov_base: $0.baseAddress, iov_len: $0.count) }
        _ = sd_journal_sendv(vectors, Int32(vectors.count))
    }

    /// syslog priorities.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// Journal field names are upper-case letters, digits and underscores.
    static func fieldName(_ key: String) -> String {
        String(key.uppercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }
}
