// SPDX-License-Identifier: GPL-2.0-or-later
import Crypto
import Foundation

/// The opening handshake of a client (§4.1): the upgrade request, then the check of the server's
/// answer. Pure: the key comes in, bytes go out.
public struct ClientHandshake: Sendable {
    /// The GUID every accept value is derived with (§1.3).
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
    /// A response head longer than this is not a WebSocket server talking.
    static let maximumHeadLength = 16 << 10

    public let url: WebSocketURL
    /// The Sec-WebSocket-Key: 16 random bytes in base64.
    public let key: String
    public let headers: [(name: String, value: String)]

    public init(url: WebSocketURL, key: String = ClientHandshake.makeKey(), headers: [(name: String, value: String)] = [])
        throws(WebSocketError)
    {
        for header in headers {
            // A CR or LF in a header would let its value write headers (or a body) of its own.
            guard !header.name.isEmpty, header.name.unicodeScalars.allSatisfy(Self.isTokenCharacter),
                !header.value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" })
            else { throw .handshakeFailed("invalid request header '\(header.name)'") }
        }
        self.url = url
        self.key = key
        self.headers = headers
    }

    /// What a header name may hold (RFC 9110 §5.6.2's token).
    private static func isTokenCharacter(_ c: Unicode.Scalar) -> Bool {
        switch c {
        case "a"..."z", "A"..."Z", "0"..."9": true
        default: "!#$%&'*+-.^_`|~".unicodeScalars.contains(c)
        }
    }

    public static func makeKey() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString()
    }

    /// The Sec-WebSocket-Accept a server must answer `key` with: base64(SHA-1(key + GUID)).
    public static func acceptValue(forKey key: String) -> String {
        Data(Insecure.SHA1.hash(data: Data((key + guid).utf8))).base64EncodedString()
    }

    /// The GET request that asks for the upgrade.
    public var request: [UInt8] {
        var lines = [
            "GET \(url.resource) HTTP/1.1",
            "Host: \(url.hostHeader)",
            "Upgrade: websocket",
            "Connection: Upgrade",
            "Sec-WebSocket-Key: \(key)",
            "Sec-WebSocket-Version: 13",
        ]
        lines += headers.map { "\($0.name): \($0.value)" }
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    /// Checks the server's answer in `received`, all the bytes read so far. Nil while the head is
    /// not complete; then the bytes after the head, which are the first frames' and must be kept.
    public func parseResponse(_ received: [UInt8]) throws(WebSocketError) -> [UInt8]? {
        guard let headEnd = Self.endOfHead(received) else {
            if received.count > Self.maximumHeadLength { throw .handshakeFailed("response head longer than \(Self.maximumHeadLength) bytes") }
            return nil
        }
        guard let head = String(validating: received[..<headEnd], as: UTF8.self) else {
            throw .handshakeFailed("response head is not text")
        }
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw .handshakeFailed("not an HTTP response: '\(statusLine.prefix(80))'")
        }
        guard status == 101 else {
            throw .handshakeFailed("server answered HTTP \(status)" + (parts.count > 2 ? " \(parts[2])" : "") + ", not 101")
        }
        var fields: [String: String] = [:]
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw .handshakeFailed("malformed header line '\(line.prefix(80))'") }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            // Repeated fields combine with commas (RFC 9110 §5.3).
            fields[name] = fields[name].map { "\($0), \(value)" } ?? value
        }
        guard fields["upgrade"]?.lowercased() == "websocket" else { throw .handshakeFailed("missing 'Upgrade: websocket'") }
        let connection = fields["connection"]?.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } ?? []
        guard connection.contains("upgrade") else { throw .handshakeFailed("missing 'Connection: Upgrade'") }
        guard let accept = fields["sec-websocket-accept"] else { throw .handshakeFailed("missing Sec-WebSocket-Accept") }
        guard accept == Self.acceptValue(forKey: key) else { throw .handshakeFailed("wrong Sec-WebSocket-Accept '\(accept)'") }
        // We offer no extension, so the server may not use one (§4.1, point 5 of the client's checks).
        if let extensions = fields["sec-websocket-extensions"], !extensions.isEmpty {
            throw .handshakeFailed("server chose an extension not offered: \(extensions)")
        }
        return Array(received[(headEnd + 4)...])
    }

    /// Where the blank line that ends the head starts, if it has arrived.
    private static func endOfHead(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4) where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i
        }
        return nil
    }
}
