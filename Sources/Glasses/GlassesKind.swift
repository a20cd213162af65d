// SPDX-License-Identifier: GPL-2.0-or-later
import LinkKit
import Logging

/// Which kind of glasses a device is (org.glassd.Device1.Kind; the spelling is the contract).
/// Each kind names itself (`GlassesKind.names`); the engine knows none.
public struct GlassesKindName: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}

/// What BlueZ shows of a device: enough to tell which kind of glasses it is.
public struct Sighting: Sendable, Equatable {
    public var name: String?
    /// Advertised (and, once connected, resolved) service UUIDs, lowercase.
    public var serviceUUIDs: [String]
    /// Characteristic UUIDs under the device once its services are resolved, lowercase.
    public var characteristicUUIDs: [String]

    public init(name: String?, serviceUUIDs: [String], characteristicUUIDs: [String] = []) {
        self.name = name
        self.serviceUUIDs = serviceUUIDs.map { $0.lowercased() }
        self.characteristicUUIDs = characteristicUUIDs.map { $0.lowercased() }
    }
}

/// A kind of glasses glassd speaks to, as a plug-in: how it is found and told apart, what a link
/// opens on it, whether it must be bonded first, the session that serves its links, and its
/// components with their updaters. Each kind lives in its own target (Monocle, Frame) and is
/// registered in one list (the daemon's `glassesKinds`); the link supervisor, the update engine
/// and the daemon take that list and know no kind by themselves.
public struct GlassesKind: Sendable {
    /// The names it gives devices (Device1.Kind), the first its own: a variant told apart once
    /// connected (a Halo among Frames) comes after it.
    public let names: [GlassesKindName]
    /// How a sentence names one: "a Monocle".
    public var title: String
    /// Its updatable components, in the order an update installs them.
    public var updaters: [any ComponentUpdater]
    /// The service the discovery filter asks for.
    public var advertisedService: String
    /// The profile's name (`GATTProfile.name`) the links of this kind carry.
    public var profile: GATTProfile
    /// Its attributes need an encrypted link with a bond (Frame): glassd pairs through BlueZ first.
    public var bonds: Bool
    /// Which kind a device is, or nil when it is not one of these.
    public var identify: @Sendable (Sighting) -> GlassesKindName?
    /// A session for this kind's links (one per daemon).
    public var makeSession: @Sendable (Logger) -> any GlassesSession
    /// The radios a pair is made of, by role, in the order they are connected: one for most kinds
    /// (`PairedGlasses.soleRole`), one per arm for glasses such as Even Realities G1. A link is up
    /// when every radio is connected; its channels are then named "role/channel".
    public var radios: [String]
    /// For a kind of more than one radio: which pair a device belongs to (devices with the same
    /// key are one pair of glasses) and which of its radios it is, from what it advertises.
    public var radioOf: @Sendable (Sighting) -> (pair: String, role: String)?
    /// Where its bootloader advertises while an update has left the glasses there, from the
    /// glasses' address; nil for a kind whose bootloader glassd does not look for.
    public var bootloaderAddress: @Sendable (BluetoothAddress) -> BluetoothAddress?
    /// The kind it looks like until connected, when it shows what tells it apart (a Halo
    /// advertises as a Frame does): out of sight it stays this kind, not the one it refines.
    public var refines: GlassesKindName?

    public init(
        names: [GlassesKindName], title: String, advertisedService: String, profile: GATTProfile, bonds: Bool,
        updaters: [any ComponentUpdater], makeSession: @escaping @Sendable (Logger) -> any GlassesSession,
        radios: [String] = [PairedGlasses.soleRole],
        radioOf: @escaping @Sendable (Sighting) -> (pair: String, role: String)? = { _ in nil },
        bootloaderAddress: @escaping @Sendable (BluetoothAddress) -> BluetoothAddress? = { _ in nil },
        refines: GlassesKindName? = nil,
        identify: @escaping @Sendable (Sighting) -> GlassesKindName?
    ) {
        precondition(!names.isEmpty, "a kind names itself")
        precondition(!radios.isEmpty && Set(radios).count == radios.count, "a kind's radios have distinct roles")
        self.names = names
        self.title = title
        self.updaters = updaters
        self.advertisedService = advertisedService.lowercased()
        self.profile = profile
        self.bonds = bonds
        self.makeSession = makeSession
        self.radios = radios
        self.radioOf = radioOf
        self.bootloaderAddress = bootloaderAddress
        self.refines = refines
        self.identify = identify
    }
}

extension GlassesKind {
    /// Its own name (manifest.toml's `kind`).
    public var name: GlassesKindName { names[0] }

    /// The updater of `component`, if this kind has one.
    public func updater(_ component: String) -> (any ComponentUpdater)? { updaters.first { $0.component == component } }

    /// Whether a pair of these glasses is more than one radio.
    public var isMultiRadio: Bool { radios.count > 1 }

    /// The updater that finishes a step cut short with the glasses in their bootloader.
    public var recoveringUpdater: (any ComponentUpdater)? { updaters.first { $0.recovers } }
}

extension Array where Element == GlassesKind {
    /// Whether `name` is a variant of `base`, told apart only once connected (a Halo of a Frame):
    /// a kind that refines `base`, or another name `base`'s own kind gives. A device seen again
    /// unconnected keeps the variant's name.
    public func isVariant(_ name: GlassesKindName?, of base: GlassesKindName?) -> Bool {
        guard let name, let base, name != base else { return false }
        if kind(named: name)?.refines == base { return true }
        guard let kind = kind(named: base) else { return false }
        return kind.name == base && kind.names.contains(name)
    }

    /// The kind that gives devices `name`.
    public func kind(named name: GlassesKindName) -> GlassesKind? { first { $0.names.contains(name) } }

    /// The first kind that recognises the device, and what it calls it.
    public func identify(_ sighting: Sighting) -> (kind: GlassesKind, name: GlassesKindName)? {
        for kind in self {
            if let name = kind.identify(sighting) { return (kind, name) }
        }
        return nil
    }
}
