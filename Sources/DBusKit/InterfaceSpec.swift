// SPDX-License-Identifier: GPL-2.0-or-later

/// An incoming method call, as handed to a method handler.
public struct MethodCall: Sendable {
    public var sender: String
    /// The caller's serial for this call: with `sender` it names the call uniquely on the bus.
    public var cookie: UInt64
    public var path: String
    public var interface: String
    public var member: String
    public var arguments: [DBusValue]
}

/// The description of one interface to export: methods answered asynchronously, properties
/// served from a value the owner keeps current, and signals.
public struct InterfaceSpec: Sendable {
    public struct Method: Sendable {
        public var name: String
        public var input: [(name: String, signature: String)]
        public var output: [(name: String, signature: String)]
        /// Runs in a child task of `BusConnection.serve()`; a thrown `BusError` becomes the error reply.
        public var handler: @Sendable (MethodCall) async throws -> [DBusValue]

        public init(
            _ name: String, input: [(String, String)] = [], output: [(String, String)] = [],
            handler: @escaping @Sendable (MethodCall) async throws -> [DBusValue]
        ) {
            self.name = name
            self.input = input.map { (name: $0.0, signature: $0.1) }
            self.output = output.map { (name: $0.0, signature: $0.1) }
            self.handler = handler
        }
    }

    public struct Property: Sendable {
        public enum Change: Sendable { case constant, emits, invalidates }
        public var name: String
        public var signature: String
        public var initial: DBusValue
        public var change: Change
        /// Present for writable properties: validates and applies a write on the bus thread, or throws
        /// a `BusError` to refuse it. It must not block.
        public var setter: (@Sendable (DBusValue) throws -> Void)?

        public init(
            _ name: String, _ initial: DBusValue, change: Change = .emits,
            setter: (@Sendable (DBusValue) throws -> Void)? = nil
        ) {
            self.name = name
            self.signature = initial.signature
            self.initial = initial
            self.change = change
            self.setter = setter
        }
    }

    public struct Signal: Sendable {
        public var name: String
        public var arguments: [(name: String, signature: String)]
        public init(_ name: String, _ arguments: [(String, String)]) {
            self.name = name
            self.arguments = arguments.map { (name: $0.0, signature: $0.1) }
        }
    }

    public var name: String
    public var methods: [Method]
    public var properties: [Property]
    public var signals: [Signal]

    public init(name: String, methods: [Method] = [], properties: [Property] = [], signals: [Signal] = []) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }
}
