// SPDX-License-Identifier: GPL-2.0-or-later

/// Where an update job is (org.glassd.Job1.Status; the spelling is the contract). The engine's
/// own phases are here; each kind's updaters add theirs (entering its bootloader, writing an
/// image), each saying whether Cancel may stop it.
public struct UpdatePhase: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    /// Why Cancel is refused in this phase; nil when stopping leaves the glasses as they were.
    public let cancelRefusal: String?

    public init(_ rawValue: String, cancelRefusal: String?) {
        self.rawValue = rawValue
        self.cancelRefusal = cancelRefusal
    }

    public var description: String { rawValue }

    public static func == (a: UpdatePhase, b: UpdatePhase) -> Bool { a.rawValue == b.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    public static let checking = UpdatePhase("checking", cancelRefusal: nil)
    public static let restarting = UpdatePhase(
        "restarting", cancelRefusal: "The glasses are starting the new image; the update ends in a moment.")
    public static let uploadingScripts = UpdatePhase(
        "uploading-scripts", cancelRefusal: "The glasses are starting the new image; the update ends in a moment.")
    public static let done = UpdatePhase("done", cancelRefusal: "The update has already ended (done).")
    public static let failed = UpdatePhase("failed", cancelRefusal: "The update has already ended (failed).")
    public static let cancelled = UpdatePhase("cancelled", cancelRefusal: "The update has already ended (cancelled).")
}
