// SPDX-License-Identifier: GPL-2.0-or-later
import EventLoop

/// Where an open connection lives on the event loop: the connecting thread hands its
/// `ConnectionLoop` over by making this actor, and the loop reaches it through it.
actor ConnectionSession {
    nonisolated let loop: EventLoop
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
    private let connection: ConnectionLoop

    init(loop: EventLoop, connection: ConnectionLoop) {
        self.loop = loop
        self.connection = connection
    }

    func start(_ leftover: [UInt8]) { connection.start(leftover) }

    func turn() { connection.turn() }
}
