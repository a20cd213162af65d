// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Glasses
import LinkKit
import Logging

/// The paired glasses' bootloader: while a firmware update runs, the glasses' application is gone
/// and their bootloader advertises where their kind says (a Nordic Secure DFU bootloader,
/// "DfuTarg", at the glasses' address + 1).
extension LinkSupervisor: BootloaderLink {
    /// Waits up to `timeout` for the paired glasses' bootloader to advertise (it also finds one
    /// left by an interrupted update), connects with the DFU profile, and runs `body` on that link.
    /// Only an advertisement seen now counts: BlueZ keeps an unbonded device's object (with its
    /// last RSSI while any client discovers) for TemporaryTimeout, so a bootloader from an
    /// earlier update still looks present before this one has started. A failed connection
    /// attempt is followed by another, on the next advertisement, for up to `connectWindow`;
    /// then this throws `LinkError.unreachable`. A drop ends the link's channels, so `body` sees
    /// its writes and waits fail. Disconnects at the end. Supervision of the application should
    /// be suspended meanwhile.
    public func withBootloader<T: Sendable>(
        timeout: Duration, connectWindow: Duration, _ body: @escaping @Sendable (any GlassesLink) async throws -> T
    ) async throws -> T {
        guard let paired else { throw LinkError.notPaired("No glasses are paired.") }
        guard let address = bootloaderAddresses(of: paired).first else {
            throw LinkError.notFound("These glasses have no bootloader glassd can reach.")
        }
        // At start-up (resuming an update) the adapter may not be known yet.
        let name = settings.adapter
        try? await client.state.wait(timeout: settings.connectTimeout) { $0.adapterPath(named: name).map($0.isPowered) == true }
        guard let adapter = client.state.snapshot.adapterPath(named: settings.adapter) else {
            throw LinkError.noAdapter("No Bluetooth adapter for the update.")
        }
        let device = client.state.snapshot.devicePath(adapter, address)
        do {
            try await advertisement(of: device, under: adapter, timeout: timeout)
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw LinkError.notFound("The glasses' bootloader (\(address)) did not appear within \(Int(seconds(timeout))) s.")
        }
        let link = try await connectBootloader(device, under: adapter, within: connectWindow)
        let result = await withTaskGroup(of: Result<T, any Error>?.self) { group in
            group.addTask {
                // The bootloader went away (a drop, or it booted the new image): end the channels.
                try? await self.client.state.wait { !$0.isPowered(adapter) || !$0.isConnected(device) }
                link.close()
                return nil
            }
            group.addTask {
                await link.socketsLost()
                link.close()
                return nil
            }
            group.addTask {
                do {
                    return .success(try await body(link))
                } catch {
                    return .failure(error)
                }
            }
            var outcome: Result<T, any Error>?
            while let next = await group.next() {
                if let next {
                    outcome = next
                    group.cancelAll()
                }
            }
            return outcome ?? .failure(CancellationError())
        }
        link.close()
        _ = try? await client.call(device, BlueZ.device, "Disconnect")
        return try result.get()
    }

    /// Connection attempts to the bootloader at `device` until one opens the DFU channels, each
    /// failure followed by a fresh advertisement, for up to `window`.
    private func connectBootloader(_ device: String, under adapter: String, within window: Duration) async throws -> BlueZLink {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: window)
        var attempt = 1
        while true {
            logger.info("connecting to the bootloader", metadata: ["device": "\(device)", "attempt": "\(attempt)"])
            let reason: String
            do {
                let left = seconds(clock.now.duration(to: deadline))
                try await client.call(device, BlueZ.device, "Connect", timeoutSeconds: max(1, min(seconds(settings.connectTimeout), left)))
                try await client.state.wait(timeout: settings.connectTimeout) { $0.isResolved(device) }
                return try await openChannels(device, profile: .nordicDFU)
            } catch {
                _ = try? await client.call(device, BlueZ.device, "Disconnect")
                if Task.isCancelled { throw CancellationError() }
                reason = BlueZ.reason(error)
            }
            let unreachable = LinkError.unreachable("Could not reach the glasses' bootloader (\(reason)).")
            guard clock.now < deadline else { throw unreachable }
            logger.notice("connecting to the bootloader failed; trying again when it advertises", metadata: ["error": "\(reason)"])
            do {
                try await advertisement(of: device, under: adapter, timeout: clock.now.duration(to: deadline))
            } catch {
                if Task.isCancelled { throw CancellationError() }
                throw unreachable
            }
            attempt += 1
        }
    }

    /// Returns once `device` advertises after this call, watching with discovery meanwhile. An
    /// object BlueZ holds from before (not connected) is removed first, so that only a new
    /// advertisement brings it back: a count of its appearances that went up is the evidence.
    func advertisement(of device: String, under adapter: String, timeout: Duration) async throws {
        let before = client.state.snapshot
        let appeared = before.appearances[device] ?? 0
        var fresh = false
        if before.properties(device, BlueZ.device) == nil {
            fresh = true  // any appearance from now on is new
        } else if !before.isConnected(device) {
            do {
                try await client.call(adapter, BlueZ.adapter, "RemoveDevice", [.objectPath(device)])
                fresh = true
            } catch {
                // Kept (bluetoothd refused): its RSSI is all there is to go by.
                logger.info("cannot remove the stale device object: \(BlueZ.reason(error))", metadata: ["device": "\(device)"])
            }
        }
        let mustAppear = fresh
        try await withDiscovery(adapter) {
            try await client.state.wait(timeout: timeout) { snapshot in
                snapshot.properties(device, BlueZ.device)?["RSSI"] != nil && (!mustAppear || (snapshot.appearances[device] ?? 0) > appeared)
            }
        }
    }
}
