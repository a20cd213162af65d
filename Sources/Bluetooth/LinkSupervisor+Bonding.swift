// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import Glasses
import LinkKit
import Logging

extension LinkError {
    /// The glasses still hold a bond this computer lost (its Bluetooth state was reset, or the
    /// device was removed outside glassd): they refuse every new pairing until their own bond
    /// is reset.
    public static let bondLost = LinkError.bondLost(
        "The glasses refused to pair: they still hold a bond this computer no longer has. Reset the glasses' bond "
            + "(Frame: press the pin-hole button in the charging cradle), then pair again.")
}

/// Glasses whose kind bonds (Frame) get a BlueZ bond before their channels open: their
/// attributes need an encrypted link. Unpairing them removes the bond with the device.
extension LinkSupervisor {
    /// The kind of the glasses at `device` as BlueZ shows them now, if glassd knows them.
    func kind(of device: String) -> GlassesKind? {
        client.state.snapshot.sighting(device).flatMap { settings.kinds.identify($0)?.kind }
    }

    /// Makes sure BlueZ holds a bond with `device`: Device1.Pair unless it is paired already
    /// (Pair connects an LE device first), then Trusted, so bluetoothd lets the glasses back in
    /// without asking the agent. Throws `LinkError.bondLost` when the glasses refuse.
    func bond(_ device: String) async throws(LinkError) {
        if !client.state.snapshot.isPaired(device) {
            pairCalls += 1
            logger.notice("bonding", metadata: ["device": "\(device)"])
            do {
                try await client.agent.whilePairing(device) {
                    try await client.call(device, BlueZ.device, "Pair", timeoutSeconds: 2 * seconds(settings.connectTimeout))
                }
            } catch let error as BusError {
                try await pairFailed(device, error)
            } catch {
                throw .failed(error is CancellationError ? "Cancelled." : "Pairing with the glasses failed: \(BlueZ.reason(error)).")
            }
        }
        guard client.state.snapshot.properties(device, BlueZ.device)?["Trusted"]?.bool != true else { return }
        do {
            _ = try await client.bus.call(
                BlueZ.service, path: device, interface: BlueZ.properties, member: "Set",
                [.string(BlueZ.device), .string("Trusted"), .variant(.bool(true))])
        } catch {
            // Not fatal: the bond is there; bluetoothd would only ask the agent more often.
            logger.warning("cannot mark the glasses trusted: \(BlueZ.reason(error))", metadata: ["device": "\(device)"])
        }
    }

    /// Device1.Pair failed with `error`: returns when that still leaves a bond, else throws.
    private func pairFailed(_ device: String, _ error: BusError) async throws(LinkError) {
        switch error.name {
        case "org.bluez.Error.AlreadyExists":
            return  // paired meanwhile
        case "org.bluez.Error.InProgress":
            // Another pairing of the same device runs (the kernel's, on the glasses' security
            // request): its outcome shows as Paired.
            do {
                try await client.state.wait(timeout: settings.connectTimeout) { $0.isPaired(device) }
            } catch {
                throw .failed("Pairing with the glasses did not finish.")
            }
        case "org.bluez.Error.AuthenticationFailed":
            logger.warning("the glasses refused to pair: they keep a bond this host lost", metadata: ["device": "\(device)"])
            throw .bondLost
        default:
            throw .failed("Pairing with the glasses failed: \(BlueZ.reason(error)).")
        }
    }

    /// Unpairing glasses whose kind bonds removes them from BlueZ, and so the bond (BlueZ
    /// disconnects them first). Others (Monocle) are only disconnected, by the supervision's end.
    func removeBond(_ address: BluetoothAddress) async {
        let snapshot = client.state.snapshot
        guard let adapter = snapshot.adapterPath(named: settings.adapter) else { return }
        let device = snapshot.devicePath(adapter, address)
        guard kind(of: device)?.bonds == true else { return }
        do {
            try await client.call(adapter, BlueZ.adapter, "RemoveDevice", [.objectPath(device)])
            logger.notice("bond removed", metadata: ["device": "\(address)"])
        } catch {
            logger.warning("cannot remove the bond: \(BlueZ.reason(error))", metadata: ["device": "\(address)"])
        }
    }
}

extension BlueZState.Snapshot {
    func isPaired(_ device: String) -> Bool {
        properties(device, BlueZ.device)?["Paired"]?.bool == true
    }
}
