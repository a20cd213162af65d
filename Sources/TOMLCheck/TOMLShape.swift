// SPDX-License-Identifier: GPL-2.0-or-later

/// Checks that a file has TOML's shape (tables, keys, strings, arrays, inline tables, scalars)
/// before toml++, under TOMLKit, reads it: that parser asserts instead of reporting some
/// malformed input ("[" alone, "[=", "c = [}", "a.# = 1", found by Scripts/fuzz), which aborts
/// glassd (and glassctl) in builds with assertions. What passes here is handed on; what does not is refused
/// with its line. Values are checked for their form only; their meaning is toml++'s and glassd's.
public struct TOMLShape {
    public struct Failure: Error, Equatable {
        public var line: Int
        public var what: String
    }

    private let scalars: [Unicode.Scalar]
    private var at = 0
    private var line = 1

    public static func check(_ text: String) throws(Failure) {
        var shape = TOMLShape(scalars: Array(text.unicodeScalars))
        try shape.document()
    }

    private init(scalars: [Unicode.Scalar]) { self.scalars = scalars }

    private var current: Unicode.Scalar? { at < scalars.count ? scalars[at] : nil }
    private func peek(_ offset: Int) -> Unicode.Scalar? { at + offset < scalars.count ? scalars[at + offset] : nil }

    private func fail(_ what: String) -> Failure { Failure(line: line, what: what) }

    private mutating func advance() {
        if current == "\n" { line += 1 }
        at += 1
    }

    private mutating func blanks() { while current == " " || current == "\t" { advance() } }

    /// A comment (if any) and the end of the line (or of the file).
    private mutating func endOfLine() throws(Failure) {
        blanks()
        if current == "#" { while let c = current, c != "\n" { advance() } }
        if current == "\r" && peek(1) == "\n" { advance() }
        guard current == nil || current == "\n" else { throw fail("unexpected \"\(current!)\"") }
        if current == "\n" { advance() }
    }

    private mutating func document() throws(Failure) {
        while current != nil {
            blanks()
            switch current {
            case nil: return
            case "#", "\n", "\r": break
            case "[": try header()
            default: try keyValue()
            }
            try endOfLine()
        }
    }

    private mutating func header() throws(Failure) {
        advance()
        let array = current == "["
        if array { advance() }
        blanks()
        try key()
        blanks()
        for _ in 0..<(array ? 2 : 1) {
            guard current == "]" else { throw fail("a table header ends with \(array ? "]]" : "]")") }
            advance()
        }
    }

    private mutating func key() throws(Failure) {
        while true {
            try simpleKey()
            blanks()
            guard current == "." else { return }
            advance()
            blanks()
        }
    }

    private mutating func simpleKey() throws(Failure) {
        switch current {
        case "\"": try basicString()
        case "'": try literalString()
        case let c? where Self.isBare(c):
            while let c = current, Self.isBare(c) { advance() }
        default: throw fail("a key is missing")
        }
    }

    private static func isBare(_ c: Unicode.Scalar) -> Bool {
        c.isASCII && (c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "_" || c == "-")
    }

    private mutating func keyValue() throws(Failure) {
        try key()
        blanks()
        guard current == "=" else { throw fail("a key needs \"= value\"") }
        advance()
        blanks()
        try value(depth: 0)
    }

    private mutating func value(depth: Int) throws(Failure) {
        // Deep nesting is no config's: bounded so hostile input cannot exhaust the stack.
        guard depth < 32 else { throw fail("values nested too deep") }
        switch current {
        case "\"": try basicString()
        case "'": try literalString()
        case "[": try array(depth: depth)
        case "{": try inlineTable(depth: depth)
        case let c? where Self.isScalarCharacter(c):
            // Numbers, booleans, dates and times: their form is toml++'s to judge.
            while let c = current, Self.isScalarCharacter(c) { advance() }
        default: throw fail("a value is missing")
        }
    }

    private static func isScalarCharacter(_ c: Unicode.Scalar) -> Bool {
        isBare(c) || c == "+" || c == "." || c == ":"
    }

    /// Blanks, comments and newlines, as arrays allow between their elements.
    private mutating func arraySpace() throws(Failure) {
        while true {
            blanks()
            switch current {
            case "#": while let c = current, c != "\n" { advance() }
            case "\n": advance()
            case "\r" where peek(1) == "\n": advance()
            default: return
            }
        }
    }

    private mutating func array(depth: Int) throws(Failure) {
        advance()
        try arraySpace()
        while current != "]" {
            try value(depth: depth + 1)
            try arraySpace()
            if current == "," {
                advance()
                try arraySpace()
            } else {
                guard current == "]" else { throw fail("array elements are separated by commas") }
            }
        }
        advance()
    }

    private mutating func inlineTable(depth: Int) throws(Failure) {
        advance()
        blanks()
        if current == "}" { return advance() }
        while true {
            try key()
            blanks()
            guard current == "=" else { throw fail("a key needs \"= value\"") }
            advance()
            blanks()
            try value(depth: depth + 1)
            blanks()
            if current == "}" { return advance() }
            guard current == "," else { throw fail("an inline table's entries are separated by commas") }
            advance()
            blanks()
        }
    }

    private mutating func basicString() throws(Failure) { try string(quote: "\"", escapes: true) }

    private mutating func literalString() throws(Failure) { try string(quote: "'", escapes: false) }

    /// A string in `quote`s, tripled for a multi-line one; basic strings have backslash escapes.
    private mutating func string(quote: Unicode.Scalar, escapes: Bool) throws(Failure) {
        let multiline = peek(1) == quote && peek(2) == quote
        for _ in 0..<(multiline ? 3 : 1) { advance() }
        while true {
            guard let c = current else { throw fail("a string is not closed") }
            if c == "\\" && escapes {
                advance()
                guard current != nil else { throw fail("a string is not closed") }
            } else if c == quote {
                if !multiline { return advance() }
                if peek(1) == quote && peek(2) == quote {
                    for _ in 0..<3 { advance() }
                    // Up to two more quotes belong to the string.
                    for _ in 0..<2 where current == quote { advance() }
                    return
                }
            } else if c == "\n" && !multiline {
                throw fail("a string is not closed")
            }
            advance()
        }
    }
}
