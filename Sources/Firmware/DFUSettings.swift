// SPDX-License-Identifier: GPL-2.0-or-later

/// Timing and limits of the DFU client.
public struct DFUSettings: Sendable {
    /// A packet receipt notification every this many packet writes: flow control, and an early
    /// checksum (Nordic's libraries default to 12). 0 turns them off.
    public var packetReceiptInterval: UInt16 = 12
    /// How long any answer may take.
    public var responseTimeout: Duration = .seconds(10)
    /// How long the last Execute may take: the bootloader checks the image's hash and signature first.
    public var finalExecuteTimeout: Duration = .seconds(30)
    /// How long one write may take to be handed to the link.
    public var writeTimeout: Duration = .seconds(10)
    /// Sends of one object (the first included) before a wrong checksum is final.
    public var objectAttempts = 4

    public init() {}
}

/// How far a transfer is, for a progress bar and for deciding when to stop.
public struct DFUProgress: Sendable, Equatable {
    public var phase: DFUPhase
    /// Image bytes the bootloader holds (resumed ones included).
    public var bytesDone: Int
    public var totalBytes: Int
    /// True between objects: a stop here leaves nothing half-sent (`SecureDFU.stop()` waits for it).
    public var atBoundary: Bool

    public init(phase: DFUPhase, bytesDone: Int, totalBytes: Int, atBoundary: Bool) {
        self.phase = phase
        self.bytesDone = bytesDone
        self.totalBytes = totalBytes
        self.atBoundary = atBoundary
    }
}
