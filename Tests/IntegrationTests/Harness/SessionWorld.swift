// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Foundation
import GlassdAPI
import Monocle
import Testing

extension BLEWorld {
    /// Runs `body` with virtual Monocle `index` (battery 87 %) and glassd (not yet paired) on
    /// `config`; a failure carries the end of glassd's and the device's logs. Afterwards, over
    /// the whole test: nothing glassd sent was lost to the device's REPL ring, never 0x1C, and no
    /// data-channel callback was dropped (unless `chunksMayDrop`: the windowed FPGA transfer
    /// sends more than the scheduler holds when the link does not pace it, and resends).
    func withSession(
        _ index: Int, config: String? = nil, environment: [String: String] = [:], chunksMayDrop: Bool = false,
        _ body: (BusConnection, VirtualMonocle) async throws -> Void
    ) async throws {
        try await withMonocle(index, txPower: -45, battery: 87) { _ in
            try await world.withGlassd(config: try config ?? writeConfig(), environment: environment) { _ in
                let bus = try await world.connect()
                let vm = VirtualMonocle(bus: bus, index: index)
                do {
                    try await body(bus, vm)
                } catch {
                    let log = world.log().suffix(6000)
                    let device = (try? String(contentsOfFile: world.directory + "/monocle\(index).log", encoding: .utf8)) ?? ""
                    await bus.close()
                    throw TestFailure("\(error)\n--- glassd:\n\(log)\n--- virtual Monocle:\n\(device.suffix(3000))")
                }
                let stats = try await vm.stats()
                #expect(stats["ring_dropped"] == 0)
                #expect(stats["safe_mode"] == 0)
                if !chunksMayDrop { #expect(stats["callbacks_dropped"] == 0) }
                await bus.close()
            }
        }
    }

    /// Pairs glassd with virtual Monocle `index` and waits until its session is ready.
    func pairReady(_ index: Int, _ bus: BusConnection) async throws {
        let path = GlassdBus.devicePath(address: Self.adapterAddress(index))
        let changes = try await bus.signals(
            SignalMatch(path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        let pair = try await world.glassctl(["pair", Self.adapterAddress(index)])
        guard pair.ok else { throw TestFailure("pair failed: \(pair.stderr)") }
        try await within(.seconds(60), failure: { "the glasses did not become ready" }) {
            for await signal in changes {
                if signal.arguments.dropFirst().first?.stringKeyed?[GlassdBus.DeviceProperty.state]?.string == "ready" { return }
            }
            throw TestFailure("signals ended before ready")
        }
    }

    /// What glassd wrote to virtual Monocle `index`'s data channel so far, in order.
    func dataWrites(_ index: Int) -> [DataMessage] {
        let text = (try? String(contentsOfFile: recordFile(index), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["service"] as? String == "data", object["type"] as? String != "notify",
                let hex = object["hex"] as? String
            else { return nil }
            return try? DataMessage.decode(bytes(hex: hex))
        }
    }

    private func bytes(hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var high: UInt8?
        for c in hex.utf8 {
            let v = c <= 57 ? c - 48 : c - 87
            if let h = high {
                out.append(h << 4 | v)
                high = nil
            } else {
                high = v
            }
        }
        return out
    }
}

/// Audio for the virtual Monocle's microphone, from the audio tests' fixtures (signed 8-bit,
/// 8 kHz), as 16-bit WAV files in `directory`.
enum SpeechFixture {
    /// "What's the weather in Paris tomorrow? Should I take an umbrella?": 1 s of silence, the
    /// question (about 3.3 s), 1.5 s of silence.
    static func speech(in directory: String) throws -> String { try wav("speech-clean", in: directory) }

    /// 2 s of silence.
    static func silence(in directory: String) throws -> String { try wav("silence", in: directory) }

    /// espeak-ng saying `text` (in `voice`, else its default) into `directory/name.wav`.
    static func spoken(_ text: String, voice: String? = nil, in directory: String, as name: String) async throws -> String {
        let path = directory + "/\(name).wav"
        let options = voice.map { ["-v", $0, "-s", "140"] } ?? []
        let made = try await runCommand("espeak-ng", options + ["-w", path, text])
        guard made.ok else { throw TestFailure("espeak-ng: \(made.stderr)") }
        return path
    }

    private static func wav(_ name: String, in directory: String) throws -> String {
        let source = Paths.root + "/Tests/AudioTests/Fixtures/\(name).s8"
        guard let raw = FileManager.default.contents(atPath: source) else { throw TestFailure("no fixture \(source)") }
        var data = Data()
        func le32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { data.append(contentsOf: $0) } }
        func le16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { data.append(contentsOf: $0) } }
        data.append(contentsOf: Array("RIFF".utf8))
        le32(36 + raw.count * 2)
        data.append(contentsOf: Array("WAVEfmt ".utf8))
        le32(16); le16(1); le16(1); le32(8000); le32(16000); le16(2); le16(16)
        data.append(contentsOf: Array("data".utf8))
        le32(raw.count * 2)
        for byte in raw { le16(Int(UInt16(bitPattern: Int16(Int8(bitPattern: byte)) << 8))) }
        let path = directory + "/\(name).wav"
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }
}

extension World {
    /// One query's rows from glassd's database (read while it runs), "|"-separated, one per line.
    func sqlite(_ query: String) async throws -> String {
        let result = try await runCommand(
            "python3",
            ["-c", "import sqlite3, sys; print('\\n'.join('|'.join(str(int(v) if isinstance(v, bool) else v) for v in row) for row in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])))",
             directory + "/state/glassd.sqlite", query])
        guard result.ok else { throw TestFailure("sqlite: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .newlines)
    }

    /// The SHA-256 of a file, in hex.
    func sha256(_ path: String) async throws -> String {
        let result = try await runCommand("sha256sum", [path])
        return String(result.stdout.prefix(64))
    }

    /// What the fake server's transcriptions say from now on (tags such as "[401]" make them fail).
    func setTranscript(_ text: String) async throws {
        try await postToServer("/_transcript", ["text": text])
    }

    /// The fake server's transcript, and `partial` for a recording shorter than `seconds` (the
    /// words before a pause).
    func setTranscript(_ text: String, partial: String, below seconds: Double) async throws {
        try await postToServer("/_transcript", ["text": text, "partial": partial, "partial_below_s": seconds])
    }

    /// How the fake server answers a chat request about an image, by the image's SHA-256.
    func setVisionAnswers(_ answers: [String: String]) async throws {
        try await postToServer("/_vision", answers)
    }

    /// How the fake server's speech answers from now on (ms_per_char, delay_ms, missing, hold).
    func setSpeech(_ settings: [String: Any]) async throws {
        try await postToServer("/_speech", settings)
    }

    private func postToServer(_ path: String, _ json: Any) async throws {
        let url = serverURL.replacingOccurrences(of: "/v1", with: "") + path
        let body = String(decoding: try JSONSerialization.data(withJSONObject: json), as: UTF8.self)
        let result = try await runCommand(
            "python3",
            ["-c", "import sys, urllib.request; urllib.request.urlopen(urllib.request.Request(sys.argv[1], sys.argv[2].encode(), {'Content-Type': 'application/json'}))", url, body])
        guard result.ok else { throw TestFailure("POST \(path) to the fake server failed: \(result.stderr)") }
    }
}
