// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Dispatch
import Foundation
import Synchronization

/// DBusKit's message encoding and decoding, fed values made from arbitrary bytes: each goes out in
/// a call to an echo service on a private dbus-daemon and must come back equal (or be refused with
/// a BusError: a string with a NUL, an object path that is not one). A trap, a hang or a value
/// that comes back changed is a finding.
enum DBusRoundTrip {
    private static let interface = "org.glassd.Fuzz1"

    /// The daemon and the two connections, made once per process.
    private static let peers: (client: BusConnection, service: String)? = {
        let directory = NSTemporaryDirectory() + "glassd-fuzz-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let config = directory + "/bus.conf"
        try? """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig><type>session</type><listen>unix:path=\(directory)/bus</listen><auth>EXTERNAL</auth>
            <policy context="default"><allow user="*"/><allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/><allow own="*"/></policy></busconfig>
            """.write(toFile: config, atomically: true, encoding: .utf8)
        // The daemon goes when this process does, however it ends: the shell around it waits on
        // a pipe only this process holds open, then stops it.
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: "/bin/sh")
        daemon.arguments = [
            "-c", "/usr/bin/dbus-daemon --config-file=\"$0\" --nofork --print-address=1 2>/dev/null & read _; kill $!", config,
        ]
        let pipe = Pipe()
        daemon.standardOutput = pipe
        daemon.standardInput = Pipe()
        guard (try? daemon.run()) != nil,
            let line = String(data: pipe.fileHandleForReading.availableData, encoding: .utf8)?.split(separator: "\n").first
        else { return nil }
        let address = String(line)
        return blocking {
            let service = try await BusConnection.open(.address(address))
            try await service.export(
                InterfaceSpec(name: interface, methods: [.init("Echo", input: [("value", "v")], output: [("value", "v")]) { $0.arguments }]),
                at: "/fuzz")
            Task { await service.serve() }
            return (try await BusConnection.open(.address(address)), try await service.uniqueName())
        }
    }()

    static func run(_ bytes: [UInt8]) {
        guard let peers else { fatalError("no private dbus-daemon for the dbus-message target (is dbus-daemon installed?)") }
        var source = ByteSource(bytes)
        var values: [DBusValue] = []
        for _ in 0..<Int(source.next() % 4 + 1) { values.append(value(&source, depth: 0)) }
        let sent = DBusValue.variant(.structure(values))
        let outcome: Result<[DBusValue], any Error> = blocking {
            try await peers.client.call(peers.service, path: "/fuzz", interface: interface, member: "Echo", [sent], timeoutSeconds: 10)
        }
        switch outcome {
        case .success(let reply):
            guard reply == [sent] else { fatalError("\(sent.signature) came back changed: \(sent) → \(reply)") }
        case .failure(let error):
            guard error is BusError else { fatalError("not a BusError: \(error)") }
        }
    }

    /// A value of the kind the next byte picks, nested at most four deep.
    private static func value(_ source: inout ByteSource, depth: Int) -> DBusValue {
        let kind = source.next() % (depth < 4 ? 16 : 11)
        switch kind {
        case 0: return .byte(source.next())
        case 1: return .bool(source.next() & 1 == 1)
        case 2: return .int16(Int16(truncatingIfNeeded: source.word()))
        case 3: return .uint32(UInt32(truncatingIfNeeded: source.word()))
        case 4: return .int64(Int64(bitPattern: source.word()))
        case 5: return .uint64(source.word())
        case 6:
            let d = Double(bitPattern: source.word())
            return .double(d.isFinite ? d : 0)
        case 7: return .string(String(decoding: source.take(Int(source.next() % 40)), as: UTF8.self))
        case 8: return .objectPath("/" + String(decoding: source.take(Int(source.next() % 20)), as: UTF8.self))
        case 9: return .signature(String(decoding: source.take(Int(source.next() % 8)), as: UTF8.self))
        case 10: return .bytes(source.take(Int(source.next() % 64)))
        case 11, 12:
            // An array of one element kind (the first element decides), possibly empty.
            let count = Int(source.next() % 4)
            let first = value(&source, depth: depth + 1)
            var elements = [first]
            while elements.count < count {
                let next = value(&source, depth: depth + 1)
                if next.signature == first.signature { elements.append(next) } else { break }
            }
            return count == 0 ? .array(element: first.signature, []) : .array(element: first.signature, elements)
        case 13:
            var fields: [DBusValue] = []
            for _ in 0..<Int(source.next() % 3 + 1) { fields.append(value(&source, depth: depth + 1)) }
            return .structure(fields)
        case 14:
            var entries: [DBusValue.DictEntry] = []
            for _ in 0..<Int(source.next() % 3) {
                let key = DBusValue.string(String(decoding: source.take(Int(source.next() % 8)), as: UTF8.self))
                entries.append(.init(key, .variant(value(&source, depth: depth + 1))))
            }
            return .dict(key: "s", value: "v", entries)
        default:
            return .variant(value(&source, depth: depth + 1))
        }
    }
}

/// The input, consumed byte by byte (zeros once it is used up).
private struct ByteSource {
    private let bytes: [UInt8]
    private var at = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func next() -> UInt8 {
        defer { at += 1 }
        return at < bytes.count ? bytes[at] : 0
    }

    mutating func word() -> UInt64 {
        var word: UInt64 = 0
        for _ in 0..<8 { word = word << 8 | UInt64(next()) }
        return word
    }

    mutating func take(_ count: Int) -> [UInt8] {
        var taken: [UInt8] = []
        for _ in 0..<count { taken.append(next()) }
        return taken
    }
}

/// Runs `body` to its end from synchronous code (libFuzzer's callback, the replayer's loop).
private func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
    let done = DispatchSemaphore(value: 0)
    let box = ResultBox<T>()
    Task {
        do { box.set(.success(try await body())) } catch { box.set(.failure(error)) }
        done.signal()
    }
    done.wait()
    return box.get()
}

private func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> T? {
    try? (blocking(body) as Result<T, any Error>).get()
}

/// The result handed from the task to the waiting thread.
private final class ResultBox<T: Sendable>: Sendable {
    private let value = Mutex<Result<T, any Error>?>(nil)
    func set(_ result: Result<T, any Error>) { value.withLock { $0 = result } }
    func get() -> Result<T, any Error> { value.withLock { $0! } }
}
