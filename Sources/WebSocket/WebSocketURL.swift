// SPDX-License-Identifier: GPL-2.0-or-later

/// A `ws://` or `wss://host[:port][/path][?query]` URL, taken apart for connecting and for the
/// request line.
public struct WebSocketURL: Sendable, Equatable {
    /// `wss`: TLS, with the server's certificate checked.
    public var isSecure: Bool
    /// The host as it is connected to: a name or an address, IPv6 without its brackets.
    public var host: String
    public var port: UInt16
    /// The request target: the path (at least "/") and the query, if any.
    public var resource: String

    /// Parses `text`. Hand-written rather than Foundation's URL so that the rules are exactly
    /// RFC 6455 §3's (no user info, no fragment, ws and wss only).
    public init(_ text: String) throws(WebSocketError) {
        guard let schemeEnd = text.firstRange(of: "://") else { throw .invalidURL(text) }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "ws" || scheme == "wss" else {
            if scheme.isEmpty || scheme.contains(where: { !$0.isLetter && !"+-.".contains($0) }) { throw .invalidURL(text) }
            throw .unsupportedScheme(scheme)
        }
        let rest = text[schemeEnd.upperBound...]
        // RFC 6455 §3: fragments are not allowed in WebSocket URIs.
        guard !rest.contains("#") else { throw .invalidURL(text) }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var target = String(rest[authorityEnd...])
        if target.isEmpty || target.hasPrefix("?") { target = "/" + target }
        guard !authority.contains("@"), !target.contains(where: { $0 == " " || $0.isNewline }) else { throw .invalidURL(text) }

        let hostPart: Substring
        let portPart: Substring?
        if authority.hasPrefix("[") {
            // An IPv6 literal: [addr] or [addr]:port.
            guard let close = authority.firstIndex(of: "]") else { throw .invalidURL(text) }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.isEmpty {
                portPart = nil
            } else if after.hasPrefix(":") {
                portPart = after.dropFirst()
            } else {
                throw .invalidURL(text)
            }
            guard hostPart.contains(":"), hostPart.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw .invalidURL(text)
            }
        } else if let colon = authority.firstIndex(of: ":") {
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        } else {
            hostPart = authority
            portPart = nil
        }
        guard !hostPart.isEmpty, !hostPart.contains(":") || authority.hasPrefix("[") else { throw .invalidURL(text) }
        var port: UInt16 = scheme == "wss" ? 443 : 80
        if let portPart {
            guard !portPart.isEmpty, portPart.allSatisfy(\.isASCII), let number = UInt16(portPart), number > 0 else {
                throw .invalidURL(text)
            }
            port = number
        }
        self.isSecure = scheme == "wss"
        self.host = String(hostPart)
        self.port = port
        self.resource = target
    }

    /// The Host header's value: the port always, since the handshake may go through a proxy
    /// that cares, and brackets back around an IPv6 literal.
    var hostHeader: String {
        (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }
}
