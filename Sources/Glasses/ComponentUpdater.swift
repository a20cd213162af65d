// SPDX-License-Identifier: GPL-2.0-or-later
import Crypto
import Foundation

/// An image for one component, checked by its updater before anything is sent.
public struct ComponentImage: Sendable {
    public var component: String
    /// The file as given (kept while the glasses may be in their bootloader).
    public var file: [UInt8]
    /// The version it brings, when pinned in the manifest.
    public var version: String?
    /// The file's SHA-256, lowercase hex.
    public var sha256: String
    /// What the updater made of the file (a DFU package, a bitstream); only it reads this.
    public var payload: any Sendable

    public init(component: String, file: [UInt8], version: String?, sha256: String, payload: any Sendable) {
        self.component = component
        self.file = file
        self.version = version
        self.sha256 = sha256
        self.payload = payload
    }

    /// The lowercase hex SHA-256 of `bytes`; a pinned one that differs refuses the image.
    public static func sha256(_ bytes: [UInt8], of what: String, pinned: String?) throws(UpdateRefusal) -> String {
        let digest = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        if let pinned, pinned.lowercased() != digest {
            throw .image("The \(what)'s SHA-256 is \(digest), not the pinned \(pinned.lowercased()).")
        }
        return digest
    }
}

/// One updatable part of a kind of glasses (its firmware, a Monocle's FPGA), as a kind brings
/// it: how its image is checked, how it is installed, and how "done" is proven. The update
/// engine runs a kind's updaters in their order and names none of them.
public protocol ComponentUpdater: Sendable {
    /// The component's name: its table in manifest.toml, Update's option, its key in Components.
    var component: String { get }
    /// How a sentence names it: "firmware", "FPGA".
    var label: String { get }
    /// Checks a file (against the pinned SHA-256 when given) and makes what `apply` sends.
    func prepare(_ file: [UInt8], version: String?, pinned sha256: String?) throws(UpdateRefusal) -> ComponentImage
    /// The progress phases `apply` goes through, each with its weight (about its time).
    func phases(_ image: ComponentImage) -> [(UpdatePhase, Double)]
    /// Installs the image on the ready glasses; returns what they report once back as themselves.
    func apply(_ image: ComponentImage, _ context: UpdateContext) async throws -> DeviceInfo?
    /// Proves the step done: throws `UpdateFailure` unless `info` shows the image running
    /// (`wanted`, or any version when the image pins none).
    func verify(_ info: DeviceInfo?, wanted: String?) throws
    /// Whether a step cut short can leave the glasses without their application (in their
    /// bootloader): the engine keeps such an image until they run again, to `recover` with it.
    var recovers: Bool { get }
    /// Finishes a step cut short, from what the glasses hold: nil when they are not waiting for
    /// it (they run their application).
    func recover(_ image: ComponentImage, _ context: UpdateContext) async throws -> DeviceInfo?
}

extension ComponentUpdater {
    public var recovers: Bool { false }

    public func recover(_ image: ComponentImage, _ context: UpdateContext) async throws -> DeviceInfo? { nil }

    /// The glasses report the component's version after the update, and it is the one wanted.
    public func verify(_ info: DeviceInfo?, wanted: String?) throws {
        let running = info?.version(of: component) ?? ""
        guard !running.isEmpty else { throw UpdateFailure("The glasses report no \(label) version after the update.") }
        if let wanted, running != wanted {
            throw UpdateFailure("The glasses run \(label) \(running) after the update, not \(wanted).")
        }
    }
}
