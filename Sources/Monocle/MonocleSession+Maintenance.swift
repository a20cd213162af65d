// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Glasses
import LinkKit
import Logging

/// The glasses' link lent out for an update: the scripts interrupted, the raw REPL entered, and
/// both channels read by the borrower alone.
public struct Maintenance<C: Clock>: Sendable where C.Duration == Duration {
    public let repl: RawRepl<C>
    public let serial: any ByteChannel
    public let data: any ByteChannel
}

/// A channel whose writes go to the link and whose reads come from what the session diverts.
struct LentChannel: ByteChannel {
    let channel: any ByteChannel
    let incoming: PacketInbox
    var maxPacketSize: Int { channel.maxPacketSize }
    var framing: ChannelFraming { channel.framing }
    func write(_ bytes: [UInt8]) async throws { try await channel.write(bytes) }
}

extension MonocleSession: BootloaderEntry {
    /// Lends the idle glasses' link to `body`; the session is `updating` meanwhile. A `body` that
    /// returns has reset the device (into its bootloader, or to boot a new FPGA image): the link
    /// is about to drop, and the next one starts from the handshake. When it throws, the scripts
    /// are started again (if the link is still up; if they do not come up, the link is dropped so
    /// the next one brings them up from the start). Throws `SessionError.busy` while a question is
    /// under way, `.notConnected` when the glasses are not ready.
    public func maintain<T: Sendable>(_ body: @Sendable (Maintenance<C>) async throws -> T) async throws -> T {
        try book.checkReady()
        guard let channels else { throw SessionError.notConnected("The glasses are not ready (starting).") }
        guard current.state == .ready, diversion == nil else { throw SessionError.busy }
        let generation = current.generation
        let serial = LentChannel(channel: channels.serial, incoming: PacketInbox())
        let data = LentChannel(channel: channels.data, incoming: PacketInbox())
        diversion = (serial.incoming, data.incoming)
        book.set(.updating, for: generation)
        let repl = RawRepl(channel: serial, clock: clock, settings: settings.repl)
        do {
            try await repl.enter()
            let value = try await body(Maintenance(repl: repl, serial: serial, data: data))
            logger.info("the glasses reset for an update")
            return value
        } catch {
            // Not in the caller's task: a cancelled update still leaves the scripts running.
            await Task { await self.giveBack(repl, generation: generation) }.value
            throw error
        }
    }

    /// Sends the idle glasses to their bootloader (`update.micropython()`); the link drops as
    /// they reset, and a bootloader ("DfuTarg") advertises at their address + 1.
    public func enterBootloader() async throws {
        try await maintain { lent in
            try await lent.repl.start(DeviceCommands.enterBootloader)
        }
    }

    /// The link may come back after a closed or silent REPL: the command may have reached them.
    public nonisolated func linkMayReturn(after error: any Error) -> Bool {
        switch error {
        case ReplError.closed, ReplError.timeout: true
        default: false
        }
    }

    /// Ends a diversion: a borrower still reading sees the end of its channels.
    func endDiversion() {
        diversion?.serial?.finish()
        diversion?.data?.finish()
        diversion = nil
    }

    private func giveBack(_ repl: RawRepl<C>, generation: UInt64) async {
        guard generation == current.generation, channels != nil else { return }
        // The scripts' rdy: is the session's again.
        diversion?.data?.finish()
        diversion?.data = nil
        let ticket = readyPulse.ticket()
        do {
            try await repl.softReboot()
            endDiversion()
            let pulse = readyPulse
            guard try await happens(within: settings.startTimeout, on: clock, { await pulse.wait(after: ticket) }) else {
                throw ReplError.timeout("restarting the scripts (no rdy:)")
            }
            book.set(.ready, reason: "", for: generation)
        } catch {
            endDiversion()
            guard generation == current.generation, channels != nil else { return }
            logger.notice("the scripts did not start again after an update step: \(error)")
            book.set(.error, reason: "The scripts did not start again after an update step.", for: generation)
            await restartLink?("the scripts did not start again after an update step")
        }
    }
}
