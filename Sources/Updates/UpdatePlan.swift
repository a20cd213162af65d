// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses

/// What an update does to these glasses: each image is applied when the glasses run another
/// version than the one pinned, always when no version is pinned (a file passed by hand) or when
/// forced. The components are in the kind's order.
public struct UpdatePlan: Sendable, Equatable {
    public var components: [String]

    public init(_ components: [String]) { self.components = components }

    public var isEmpty: Bool { components.isEmpty }

    public func contains(_ component: String) -> Bool { components.contains(component) }

    public static func make(_ images: UpdateImages, device: DeviceInfo?, force: Bool) -> UpdatePlan {
        UpdatePlan(
            images.ordered.filter { image in force || image.version == nil || image.version != device?.version(of: image.component) }
                .map(\.component))
    }

    /// Why glasses of `kind` running `device` need the pinned images (Device1.StateReason); nil when current.
    public static func outdated(_ images: UpdateImages, device: DeviceInfo, kind: GlassesKind) -> String? {
        let reasons = images.ordered.compactMap { image -> String? in
            guard let wanted = image.version, wanted != device.version(of: image.component) else { return nil }
            let label = kind.updater(image.component)?.label ?? image.component
            return "\(label) \(shown(device.version(of: image.component))) → \(wanted)"
        }
        return reasons.isEmpty ? nil : "Update available: " + reasons.joined(separator: ", ") + "."
    }

    /// The versions as history shows them: "firmware v…, fpga v…", each of the kind's components.
    public static func versions(_ info: DeviceInfo?, kind: GlassesKind) -> String {
        kind.updaters.map { "\($0.component) \(shown(info?.version(of: $0.component)))" }.joined(separator: ", ")
    }

    private static func shown(_ version: String?) -> String {
        guard let version, !version.isEmpty else { return "unknown" }
        return version
    }
}
