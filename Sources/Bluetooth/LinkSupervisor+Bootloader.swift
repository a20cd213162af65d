// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import GlassdCore
import Logging

/// The paired glasses' bootloader: while a firmware update runs, the Monocle's application is gone
/// and a Nordic Secure DFU bootloader ("DfuTarg") advertises at the glasses' address + 1.
extension LinkSupervisor {
    /// Waits up to `timeout` for the paired glasses' bootloader to advertise (it also finds one
    /// left by an interrupted update), connects with the DFU profile, and runs `body` on that link.
    /// A drop ends the link's channels, so `body` sees its writes and waits fail. Disconnects at
    /// the end. Supervision of the application should be suspended meanwhile.
    public func withBootloader<T: Sendable>(
        timeout: Duration, _ body: @escaping @Sendable (any GlassesLink) async throws -> T
    ) async throws -> T {
        guard let address = pairedAddress?.bootloader else { throw LinkError.notPaired("No glasses are paired.") }
        // At start-up (resuming an update) the adapter may not be known yet.
        let name = settings.adapter
        try? await client.state.wait(timeout: settings.connectTimeout) { $0.adapterPath(named: name).map($0.isPowered) == true }
        guard let adapter = client.state.snapshot.adapterPath(named: settings.adapter) else {
            throw LinkError.noAdapter("No Bluetooth adapter for the update.")
        }
        let device = client.state.snapshot.devicePath(adapter, address)
        do {
            try await withDiscovery(adapter) {
                try await client.state.wait(timeout: timeout) { $0.properties(device, BlueZ.device)?["RSSI"] != nil }
            }
        } catch {
            throw LinkError.notFound("The glasses' bootloader (\(address)) did not appear: \(error)")
        }
        logger.info("connecting to the bootloader", metadata: ["device": "\(address)"])
        try await client.call(device, BlueZ.device, "Connect", timeoutSeconds: seconds(settings.connectTimeout))
        let link: BlueZLink
        do {
            try await client.state.wait(timeout: settings.connectTimeout) { $0.isResolved(device) }
            link = try await openChannels(device, profile: .nordicDFU)
        } catch {
            _ = try? await client.call(device, BlueZ.device, "Disconnect")
            throw error
        }
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
}
