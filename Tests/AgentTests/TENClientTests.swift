// SPDX-License-Identifier: GPL-2.0-or-later
import Agent
import AssistantEngine
import Testing

@Suite("TEN client", .timeLimit(.minutes(5)))
struct TENClientTests {
    private let ok = #"{"code":"0","msg":"success","data":null}"#

    private func client(_ transport: ScriptedTransport, base: String = "http://agent.test:8080/") -> TENClient {
        TENClient(baseURL: base, transport: transport, timeout: .seconds(7))
    }

    private func failure(_ transport: ScriptedTransport) async -> AgentError? {
        do {
            try await client(transport).ping(requestID: "r", channel: "c")
            return nil
        } catch {
            return error
        }
    }

    @Test("start posts the request as JSON, nil fields left out")
    func start() async throws {
        let transport = ScriptedTransport(ok)
        let request = TENStartRequest(
            requestID: "req-1", channel: "glassd-1", graph: "voice_assistant", userUID: 4_000_000_000,
            properties: ["websocket_server": ["port": 8766]], timeoutSeconds: 60)
        try await client(transport).start(request)
        let sent = try #require(transport.last)
        #expect(sent.method == "POST")
        #expect(sent.url == "http://agent.test:8080/start")
        #expect(sent.headers.contains { $0.name == "Content-Type" && $0.value == "application/json" })
        #expect(sent.timeout == .seconds(7))
        #expect(
            transport.lastBody
                == #"{"channel_name":"glassd-1","graph_name":"voice_assistant","properties":{"websocket_server":{"port":8766}},"request_id":"req-1","timeout":60,"user_uid":4000000000}"#
        )

        let bare = ScriptedTransport(ok)
        try await client(bare).start(TENStartRequest(requestID: "r", channel: "c", graph: "g"))
        #expect(bare.lastBody == #"{"channel_name":"c","graph_name":"g","request_id":"r","user_uid":0}"#)
    }

    @Test("ping and stop post the request id and channel")
    func pingStop() async throws {
        let transport = ScriptedTransport([.init(status: 200, body: ok), .init(status: 200, body: ok)])
        let c = client(transport, base: "http://agent.test:8080")
        try await c.ping(requestID: "r1", channel: "ch")
        #expect(transport.last?.url == "http://agent.test:8080/ping")
        #expect(transport.lastBody == #"{"channel_name":"ch","request_id":"r1"}"#)
        try await c.stop(requestID: "r2", channel: "ch")
        #expect(transport.last?.url == "http://agent.test:8080/stop")
        #expect(transport.lastBody == #"{"channel_name":"ch","request_id":"r2"}"#)
    }

    @Test("list skips the null entries the server puts first; graphs gives the names")
    func listAndGraphs() async throws {
        let transport = ScriptedTransport([
            .init(
                status: 200,
                body:
                    #"{"code":"0","msg":"success","data":[null,null,{"channelName":"a","createTs":1750000000},{"channelName":"b","createTs":1750000100}]}"#
            ),
            .init(
                status: 200,
                body:
                    #"{"code":"0","msg":"success","data":[{"name":"voice_assistant","graph_id":"1","auto_start":false},{"name":"transcription"}]}"#
            ),
        ])
        let c = client(transport)
        #expect(
            try await c.list() == [
                TENWorker(channel: "a", createdAt: 1_750_000_000), TENWorker(channel: "b", createdAt: 1_750_000_100),
            ])
        #expect(transport.last?.method == "GET")
        #expect(transport.last?.url == "http://agent.test:8080/list")
        #expect(try await c.graphs() == ["voice_assistant", "transcription"])
        #expect(transport.last?.url == "http://agent.test:8080/graphs")
    }

    @Test("an empty list is an empty array, whether [] or null")
    func emptyList() async throws {
        let transport = ScriptedTransport([
            .init(status: 200, body: #"{"code":"0","msg":"success","data":[]}"#),
            .init(status: 200, body: #"{"code":"0","msg":"success","data":null}"#),
        ])
        #expect(try await client(transport).list() == [])
        #expect(try await client(transport).list() == [])
    }

    @Test("a numeric 0 is success too")
    func numericZero() async {
        #expect(await failure(ScriptedTransport(#"{"code":0,"msg":"ok"}"#)) == nil)
    }

    @Test(
        "error codes, also on HTTP error statuses",
        arguments: [
            (429, #"{"code":"10001","msg":"workers limit","data":null}"#, AgentError.busy("workers limit")),
            (400, #"{"code":"10003","msg":"channel existed"}"#, .channelExists("channel existed")),
            (
                400, #"{"code":"10002","msg":"channel not existed"}"#,
                .failed(code: "10002", message: "channel not existed")
            ),
            (
                500, #"{"code":"10101","msg":"start worker failed"}"#,
                .failed(code: "10101", message: "start worker failed")
            ),
            (200, #"{"code":"10000","msg":"params invalid"}"#, .failed(code: "10000", message: "params invalid")),
            (200, #"{"code":10001}"#, .busy("")),
        ])
    func errors(status: Int, body: String, expected: AgentError) async {
        #expect(await failure(ScriptedTransport(status: status, body)) == expected)
    }

    @Test("a reply not in the server's shape is malformed, naming the HTTP status")
    func malformed() async {
        for (status, body) in [
            (502, "<html>Bad Gateway</html>"), (200, "{}"), (200, ""), (200, "[1]"), (404, "404 page not found"),
        ] {
            let error = await failure(ScriptedTransport(status: status, body))
            guard case .malformed(let message)? = error else {
                Issue.record("\(status) \(body): \(String(describing: error))")
                continue
            }
            #expect(message.contains("HTTP \(status)"))
            #expect(message.contains("agent.test:8080"))
        }
        #expect(
            await failure(ScriptedTransport(status: 500, #"{"code":"0","msg":"?"}"#))
                == .malformed("The agent server at agent.test:8080 answered HTTP 500 with code 0."))
    }

    @Test("transport failures are unreachable, in plain words")
    func unreachable() async {
        let cases: [(HTTPTransportError, String)] = [
            (
                .connectionFailed("Connection refused"),
                "Could not reach the agent server at agent.test:8080: Connection refused"
            ),
            (.timedOut, "No reply from the agent server at agent.test:8080 within 7 s."),
            (.cancelled, "The request to the agent server at agent.test:8080 was cancelled."),
        ]
        for (failure, message) in cases {
            #expect(
                await self.failure(ScriptedTransport([.init(status: 0, body: "", failure: failure)]))
                    == .unreachable(message))
        }
        // Broken while the body was read.
        #expect(
            await self.failure(ScriptedTransport([.init(status: 200, body: #"{"code":"#, failure: .timedOut)]))
                == .unreachable("No reply from the agent server at agent.test:8080 within 7 s."))
    }

    @Test("credentials in the base URL never reach a message")
    func noSecrets() async {
        let transport = ScriptedTransport([.init(status: 0, body: "", failure: .timedOut)])
        let c = TENClient(baseURL: "http://user:hunter2@agent.test:8080/?key=s3cret", transport: transport)
        do {
            try await c.stop(requestID: "r", channel: "c")
            Issue.record("no error")
        } catch {
            #expect(!error.message.contains("hunter2") && !error.message.contains("s3cret"))
            #expect(error.message.contains("agent.test:8080"))
        }
    }

    @Test("messages name the code and msg")
    func messages() {
        #expect(
            AgentError.busy("workers limit").message
                == "The agent server has no free worker (code 10001): workers limit.")
        #expect(AgentError.channelExists("").message == "An agent already runs on this channel (code 10003).")
        #expect(
            AgentError.failed(code: "10101", message: "start worker failed.").message
                == "The agent server refused (code 10101): start worker failed.")
        #expect(AgentError.unreachable("No reply.").message == "No reply.")
    }
}
