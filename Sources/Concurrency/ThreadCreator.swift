// SPDX-License-Identifier: GPL-2.0-or-later
import Glibc

/// How a loop starts its thread: pthread_create, or a stand-in that fails (a test's).
public struct ThreadCreator: Sendable {
    /// Starts `threadEntry` with the argument; 0 or an errno value, as pthread_create returns.
    let create: @Sendable (UnsafeMutablePointer<pthread_t>, UnsafeMutableRawPointer) -> Int32

    public init(create: @escaping @Sendable (UnsafeMutablePointer<pthread_t>, UnsafeMutableRawPointer) -> Int32) {
        self.create = create
    }

    public static let system = ThreadCreator { thread, argument in pthread_create(thread, nil, threadEntry, argument) }

    /// Starts a thread running `body`; 0 or an errno value (then `body` never runs).
    public func start(_ thread: inout pthread_t, _ body: @escaping @Sendable () -> Void) -> Int32 {
        let argument = Unmanaged.passRetained(ThreadStart(body))
        let created = create(&thread, argument.toOpaque())
        if created != 0 { argument.release() }  // the thread that would have taken it never started
        return created
    }
}

/// What a new thread runs; handed over through pthread_create's argument.
private final class ThreadStart: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

private func threadEntry(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let argument else { return nil }
    Unmanaged<ThreadStart>.fromOpaque(argument).takeRetainedValue().body()
    return nil
}
