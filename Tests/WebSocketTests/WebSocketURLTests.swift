// SPDX-License-Identifier: GPL-2.0-or-later
import Testing
import WebSocket

@Suite(.timeLimit(.minutes(5))) struct WebSocketURLTests {
    @Test func parsesHostPortPathAndQuery() throws {
        let full = try WebSocketURL("ws://example.com:8765/agent/ws?session=1&x=2")
        #expect(full.host == "example.com" && full.port == 8765 && full.resource == "/agent/ws?session=1&x=2")
        let bare = try WebSocketURL("ws://example.com")
        #expect(bare.host == "example.com" && bare.port == 80 && bare.resource == "/")
        let query = try WebSocketURL("WS://10.0.0.2:1?q")
        #expect(query.host == "10.0.0.2" && query.port == 1 && query.resource == "/?q")
        #expect(!full.isSecure && !bare.isSecure)
    }

    @Test func wssIsSecureOnPort443ByDefault() throws {
        let secure = try WebSocketURL("wss://example.com/ws")
        #expect(secure.isSecure && secure.host == "example.com" && secure.port == 443 && secure.resource == "/ws")
        let withPort = try WebSocketURL("WSS://[::1]:8443")
        #expect(withPort.isSecure && withPort.host == "::1" && withPort.port == 8443)
    }

    @Test func parsesIPv6Literals() throws {
        let withPort = try WebSocketURL("ws://[::1]:8765/ws")
        #expect(withPort.host == "::1" && withPort.port == 8765 && withPort.resource == "/ws")
        let withoutPort = try WebSocketURL("ws://[fe80::1:2]")
        #expect(withoutPort.host == "fe80::1:2" && withoutPort.port == 80)
    }

    @Test func refusesOtherSchemes() {
        #expect(throws: WebSocketError.unsupportedScheme("https")) { try WebSocketURL("https://example.com") }
        #expect(throws: WebSocketError.unsupportedScheme("http")) { try WebSocketURL("http://example.com") }
        #expect(WebSocketError.unsupportedScheme("http").message.contains("unsupported scheme"))
    }

    @Test func refusesMalformedURLs() {
        for text in [
            "", "example.com", "ws://", "ws://:80", "ws://host:", "ws://host:0", "ws://host:65536", "ws://host:8x",
            "ws://[::1", "ws://[::1]x", "ws://[host]:80", "ws://::1:80", "ws://user@host", "ws://host/#frag", "ws://host/a b",
        ] {
            #expect(throws: WebSocketError.self, "\(text)") { try WebSocketURL(text) }
        }
    }
}
