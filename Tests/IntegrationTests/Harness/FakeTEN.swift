// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// The fake TEN agent server (Tests/Fixtures/fake_ten.py) for one test: its HTTP API and the
/// graph's websocket, with the control endpoints the tests drive it through.
struct FakeTEN: Sendable {
    let httpURL: String
    let wsURL: String

    /// Runs it (with the test world's Python, which has `websockets`) for the duration of `body`.
    static func with<R: Sendable>(
        in directory: String, arguments: [String] = [], _ body: (FakeTEN) async throws -> R
    ) async throws -> R {
        try await withBackground(
            BLEWorld.venv + "/bin/python", [Paths.fixtures + "/fake_ten.py", "--reaper-seconds", "0.5"] + arguments,
            log: directory + "/fake_ten.log", firstLine: true
        ) { _, ready in
            // "ready http=PORT ws=PORT"
            let ports = Dictionary(
                uniqueKeysWithValues: ready.split(separator: " ").dropFirst().compactMap { field -> (String, String)? in
                    let pair = field.split(separator: "=")
                    return pair.count == 2 ? (String(pair[0]), String(pair[1])) : nil
                })
            guard let http = ports["http"], let ws = ports["ws"] else { throw TestFailure("fake_ten said: \(ready)") }
            return try await body(FakeTEN(httpURL: "http://127.0.0.1:\(http)", wsURL: "ws://127.0.0.1:\(ws)"))
        }
    }

    /// An [agent] section for this server.
    func config(pingSeconds: Int = 1, timeoutSeconds: Int = 60, extra: String = "") -> String {
        """
        [agent]
        kind = "ten"
        base_url = "\(httpURL)"
        graph = "voice_assistant"
        websocket_url = "\(wsURL)"
        ping_seconds = \(pingSeconds)
        timeout_seconds = \(timeoutSeconds)
        \(extra)
        [agent.properties.llm]
        model = "test-model"
        max_tokens = 64

        """
    }

    /// Adds an [agent] section for this server to the glassd.conf at `path`.
    func appendConfig(to path: String, pingSeconds: Int = 1, timeoutSeconds: Int = 60, extra: String = "") throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
            + config(pingSeconds: pingSeconds, timeoutSeconds: timeoutSeconds, extra: extra)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// GET or POST (with a JSON body) to the fake; the reply's JSON.
    @discardableResult
    func request(_ path: String, _ body: [String: Any]? = nil) async throws -> Any {
        let script = """
            import sys, urllib.request, urllib.error
            data = sys.argv[2].encode() if len(sys.argv) > 2 else None
            req = urllib.request.Request(sys.argv[1], data=data, headers={"Content-Type": "application/json"})
            try:
                sys.stdout.write(urllib.request.urlopen(req, timeout=120).read().decode())
            except urllib.error.HTTPError as e:
                sys.stdout.write(e.read().decode())
            """
        var arguments = ["-c", script, httpURL + path]
        if let body { arguments.append(String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)) }
        let result = try await runCommand("python3", arguments)
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    }

    /// The API requests received so far (`path`, `body`, `violations`).
    func requests() async throws -> [[String: Any]] {
        try await request("/_requests") as? [[String: Any]] ?? []
    }

    /// Waits (event-driven, in the fake) for `what` to reach `atLeast`; throws at the timeout.
    func wait(for what: String, atLeast: Int = 1, timeout: Int = 60) async throws {
        let reply = try await request("/_wait", ["for": what, "at_least": atLeast, "timeout": timeout]) as? [String: Any]
        guard reply?["code"] as? String == "0" else { throw TestFailure("fake TEN: no \(what) ≥ \(atLeast) within \(timeout) s") }
    }

    /// Sends a transcript to glassd over the websocket (chunked as TEN's message collector does, if
    /// asked); returns when its last frame left, in CLOCK_BOOTTIME nanoseconds.
    @discardableResult
    func sendTranscript(
        role: String, text: String, final: Bool, ts: Int, chunked: Bool = false, options: [String: Any] = [:]
    ) async throws -> Int64 {
        var body: [String: Any] = [
            "transcript": [
                "role": role, "text": text, "is_final": final, "text_ts": ts, "data_type": "transcribe", "stream_id": role == "user" ? 1 : 0,
            ],
            "chunked": chunked,
        ]
        body.merge(options) { $1 }
        var reply = try await request("/_send", body) as? [String: Any]
        // A session may report running before its socket is up (on a loaded machine, seconds
        // before), or be between two sockets: wait until one is connected, a few times.
        for _ in 0..<3 where reply?["msg"] as? String == "no websocket client connected" {
            try await wait(for: "connected")
            reply = try await request("/_send", body) as? [String: Any]
        }
        guard reply?["code"] as? String == "0" else { throw TestFailure("fake TEN could not send: \(reply ?? [:])") }
        return ((reply?["data"] as? [String: Any])?["sent_boottime_ns"] as? NSNumber)?.int64Value ?? 0
    }
}
