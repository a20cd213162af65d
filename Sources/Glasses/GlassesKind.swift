// SPDX-License-Identifier: GPL-2.0-or-later
import GlassdCore
import Logging

/// Which kind of glasses a device is (org.glassd.Device1.Kind; the spelling is the contract).
public enum GlassesKindName: String, Sendable, CaseIterable {
    case monocle, frame, halo
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

/// A kind of glasses glassd speaks to: how it is found and told apart, what a link opens on it,
/// whether it must be bonded first, and the session that serves its links (which, as a
/// `BootloaderEntry`, is its firmware updater too). Each kind's UUIDs live with its protocol
/// (Monocle, Frame); the link supervisor and the daemon take a list of these and know no device
/// by themselves.
public struct GlassesKind: Sendable {
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

    public init(
        advertisedService: String, profile: GATTProfile, bonds: Bool,
        makeSession: @escaping @Sendable (Logger) -> any GlassesSession,
        identify: @escaping @Sendable (Sighting) -> GlassesKindName?
    ) {
        self.advertisedService = advertisedService.lowercased()
        self.profile = profile
        self.bonds = bonds
        self.makeSession = makeSession
        self.identify = identify
    }
}

extension Array where Element == GlassesKind {
    /// The first kind that recognises the device, and what it calls it.
    public func identify(_ sighting: Sighting) -> (kind: GlassesKind, name: GlassesKindName)? {
        for kind in self {
            if let name = kind.identify(sighting) { return (kind, name) }
        }
        return nil
    }
}
