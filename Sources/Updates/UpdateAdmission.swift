// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses

/// Whether an update may start, and as what: the checks made before anything reaches the glasses,
/// in the order a caller meets them. No D-Bus: a refusal is an `UpdateRefusal` the daemon names.
public struct UpdateAdmission: Sendable {
    /// What the paired glasses and glassd know at the moment of the request.
    public struct Situation: Sendable {
        public var status: SessionStatus
        /// The paired glasses' kind, and every kind glassd knows.
        public var kind: GlassesKind
        public var kinds: [GlassesKind]
        /// An earlier update left an image kept for these glasses (they may be in their bootloader).
        public var pendingForThem: Bool
        /// Their bootloader is in sight while glassd watches for the glasses themselves.
        public var bootloaderSighted: Bool
        public var minBattery: UInt8

        public init(
            status: SessionStatus, kind: GlassesKind, kinds: [GlassesKind], pendingForThem: Bool, bootloaderSighted: Bool,
            minBattery: UInt8
        ) {
            self.status = status
            self.kind = kind
            self.kinds = kinds
            self.pendingForThem = pendingForThem
            self.bootloaderSighted = bootloaderSighted
            self.minBattery = minBattery
        }
    }

    /// What to do with the images read.
    public enum Decision: Sendable, Equatable {
        /// Send the given image to glasses in their bootloader, as a resumed transfer.
        case recover
        case start(UpdatePlan)
    }

    /// Before the images are read: whether the image an update cut short kept goes on first
    /// (no files needed).
    public static func resumesKept(_ situation: Situation) -> Bool {
        situation.status.state != .ready && situation.pendingForThem
    }

    /// With the images read: refused, recovered, or planned.
    public static func decide(_ images: UpdateImages, force: Bool, _ situation: Situation) throws(UpdateRefusal) -> Decision {
        if let mismatch = mismatch(images, kind: situation.kind, kinds: situation.kinds) { throw .image(mismatch) }
        let status = situation.status
        if status.state != .ready, let recovering = situation.kind.recoveringUpdater, images[recovering.component] != nil,
            situation.bootloaderSighted
        {
            // Left in their bootloader by something glassd kept no image of (another tool, a lost
            // database): the given image brings them back.
            return .recover
        }
        guard status.state == .ready else {
            throw UpdateRefusal(
                status.state == .busy ? .busy : .notConnected,
                "The glasses must be connected and idle for an update (they are \(status.state.rawValue)).")
        }
        let plan = UpdatePlan.make(images, device: status.info, force: force)
        // Nothing to send needs no battery.
        if !plan.isEmpty, !force, let battery = status.info?.battery, battery < situation.minBattery {
            throw UpdateRefusal(
                .batteryLow, "The glasses' battery is at \(battery) %, below \(situation.minBattery) %: charge them first, or force.")
        }
        return .start(plan)
    }

    /// Why `images` do not suit glasses of `kind`, or nil: each image must be of one of their
    /// components, and pinned images name their kind.
    public static func mismatch(_ images: UpdateImages, kind: GlassesKind, kinds: [GlassesKind]) -> String? {
        for image in images.ordered where kind.updater(image.component) == nil {
            let holders = kinds.filter { $0.updater(image.component) != nil }
            let label = holders.first?.updater(image.component)?.label ?? image.component
            return "The \(label) image is for \(holders.map(\.title).joined(separator: " or ")); the paired glasses are \(kind.title)."
        }
        if let name = images.kind, !kind.names.contains(name) {
            return "The pinned images are for \(kinds.kind(named: name)?.title ?? name.rawValue); the paired glasses are \(kind.title)."
        }
        return nil
    }
}
