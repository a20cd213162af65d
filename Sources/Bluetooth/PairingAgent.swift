// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import DBusKit
import Logging
import Synchronization

/// glassd's org.bluez.Agent1 (BlueZ doc/org.bluez.Agent.rst), capability NoInputNoOutput.
/// Glasses that bond do so with Just Works, which needs nobody: bluetoothd asks an agent at most
/// to confirm or authorize, and this one says yes only for a device glassd is pairing at that
/// moment, so nothing else pairs with the host behind its back. PINs and passkeys are refused:
/// no glasses glassd knows use them, and there is nobody to type one.
public final class PairingAgent: Sendable {
    public static let path = "/org/glassd/bluez/agent"
    public static let interface = "org.bluez.Agent1"
    static let capability = "NoInputNoOutput"
    /// BlueZ's agent API names one error for every refusal (PairingRefusal).
    static let rejected = "org.bluez.Error.Rejected"

    private let bus: BusConnection
    private let logger: Logger
    /// Which bluetoothd (its `bluezArrivals` count) the agent was last registered with; 0
    /// before the first.
    public let registered = Watched<UInt64>(0)
    /// Device paths glassd is pairing now, each with how many pairings of it are in flight.
    private let pairing = Mutex<[String: Int]>([:])

    init(bus: BusConnection, logger: Logger) {
        self.bus = bus
        self.logger = logger
    }

    /// Runs `body` (the Device1.Pair call) with `device` counted as being paired by glassd.
    func whilePairing<T>(
        _ device: String, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
    ) async throws -> T {
        pairing.withLock { $0[device, default: 0] += 1 }
        defer {
            pairing.withLock { state in
                state[device, default: 1] -= 1
                if state[device] == 0 { state.removeValue(forKey: device) }
            }
        }
        return try await body()
    }

    /// What the agent answers `member` about `device`, whoever asks (the caller is checked
    /// before): success for confirmations and authorizations of a device being paired now.
    func answer(_ member: String, device: String?) throws(BusError) -> [DBusValue] {
        switch member {
        case "Release", "Cancel":
            return []
        case "RequestConfirmation", "RequestAuthorization", "AuthorizeService":
            guard let device, pairing.withLock({ $0[device] != nil }) else {
                throw PairingRefusal.notPairing.busError
            }
            return []
        default:
            // RequestPinCode, RequestPasskey, DisplayPinCode, DisplayPasskey: not Just Works.
            throw PairingRefusal.needsCode.busError
        }
    }

    /// The exported interface; every call must come from bluetoothd (org.bluez's owner now).
    var spec: InterfaceSpec {
        let methods: [(String, [(String, String)], [(String, String)])] = [
            ("Release", [], []),
            ("RequestPinCode", [("device", "o")], [("pincode", "s")]),
            ("DisplayPinCode", [("device", "o"), ("pincode", "s")], []),
            ("RequestPasskey", [("device", "o")], [("passkey", "u")]),
            ("DisplayPasskey", [("device", "o"), ("passkey", "u"), ("entered", "q")], []),
            ("RequestConfirmation", [("device", "o"), ("passkey", "u")], []),
            ("RequestAuthorization", [("device", "o")], []),
            ("AuthorizeService", [("device", "o"), ("uuid", "s")], []),
            ("Cancel", [], []),
        ]
        return InterfaceSpec(
            name: Self.interface,
            methods: methods.map { name, input, output in
                InterfaceSpec.Method(name, input: input, output: output) { [self] call in
                    try await self.handle(call)
                }
            })
    }

    private func handle(_ call: MethodCall) async throws -> [DBusValue] {
        let owner = try? await bus.call(
            "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetNameOwner", [.string(BlueZ.service)])
        guard owner?.first?.string == call.sender else {
            throw PairingRefusal.notBluetoothd.busError
        }
        let device = call.arguments.first?.string
        do {
            let reply = try answer(call.member, device: device)
            logger.info("agent: \(call.member) answered", metadata: ["device": "\(device ?? "-")"])
            return reply
        } catch {
            logger.notice("agent: \(call.member) rejected", metadata: ["device": "\(device ?? "-")"])
            throw error
        }
    }

    // MARK: Registration

    /// Registers the agent with every bluetoothd that comes onto the bus (a restarted one has
    /// forgotten it), until cancelled.
    func keepRegistered(_ state: BlueZState) async {
        var registeredWith: UInt64 = 0
        while true {
            let done = registeredWith
            do {
                try await state.wait { $0.present && $0.bluezArrivals != done }
            } catch {
                return  // cancelled
            }
            registeredWith = state.snapshot.bluezArrivals
            await register(registeredWith)
        }
    }

    private func register(_ arrival: UInt64) async {
        let path = DBusValue.objectPath(Self.path)
        do {
            do {
                _ = try await bus.call(
                    BlueZ.service, path: "/org/bluez", interface: BlueZ.agentManager, member: "RegisterAgent",
                    [path, .string(Self.capability)])
            } catch let error as BusError where error.name == "org.bluez.Error.AlreadyExists" {
                // Registered already (BlueZ keeps one agent per connection).
            }
            // Not the default agent: bluetoothd asks the agent of the client that called Pair, so
            // glassd's serves glassd's pairings, and the desktop's agent keeps serving the rest
            // (as the default, it would refuse every pairing glassd did not start).
            logger.info("pairing agent registered with bluetoothd")
            registered.set(arrival)
        } catch {
            logger.warning("cannot register the pairing agent with bluetoothd: \(BlueZ.reason(error))")
        }
    }
}
