// SPDX-License-Identifier: GPL-2.0-or-later

/// One slot as the image state command lists it.
public struct ImageSlot: Sendable, Equatable {
    /// The image (pair of slots); 0 unless the device has several (Zephyr sends it only then).
    public var image: Int
    /// 0: primary (what runs), 1: secondary (where an upload goes).
    public var slot: Int
    /// "major.minor.revision" or "major.minor.revision.build" as the device prints it.
    public var version: String
    /// The SHA-256 from the image's TLVs (`MCUbootImage.tlvHash`); not the upload's `sha`.
    public var hash: [UInt8]?
    public var bootable: Bool
    /// Marked to be swapped in at the next reset.
    public var pending: Bool
    /// Confirmed: MCUboot will not revert it.
    public var confirmed: Bool
    /// Running now.
    public var active: Bool
    /// Pending as a permanent swap (no test boot).
    public var permanent: Bool

    public init(
        image: Int = 0, slot: Int, version: String, hash: [UInt8]?, bootable: Bool = true, pending: Bool = false,
        confirmed: Bool = false, active: Bool = false, permanent: Bool = false
    ) {
        self.image = image
        self.slot = slot
        self.version = version
        self.hash = hash
        self.bootable = bootable
        self.pending = pending
        self.confirmed = confirmed
        self.active = active
        self.permanent = permanent
    }

    /// The entry as Zephyr encodes it: flags only when true, `bootable` always.
    public var payload: CBOR {
        var pairs: [CBOR.Pair] = [CBOR.Pair(.text("image"), .int(image)), CBOR.Pair(.text("slot"), .int(slot))]
        pairs.append(CBOR.Pair(.text("version"), .text(version)))
        if let hash { pairs.append(CBOR.Pair(.text("hash"), .bytes(hash))) }
        pairs.append(CBOR.Pair(.text("bootable"), .bool(bootable)))
        for (name, on) in [("pending", pending), ("confirmed", confirmed), ("active", active), ("permanent", permanent)] where on {
            pairs.append(CBOR.Pair(.text(name), .bool(true)))
        }
        return .map(pairs)
    }
}

/// The image state command's answer (to a read and to a write alike). `splitStatus` is ignored.
public struct ImageState: Sendable, Equatable {
    public var slots: [ImageSlot]

    public init(slots: [ImageSlot]) { self.slots = slots }

    /// The slot that runs now (of image 0).
    public var active: ImageSlot? { slots.first { $0.image == 0 && $0.active } }

    /// The slot holding the image whose TLV hash is `hash`.
    public func slot(withHash hash: [UInt8]) -> ImageSlot? { slots.first { $0.hash == hash } }

    public var payload: CBOR { .map(["images": .array(slots.map(\.payload))]) }

    public static func decode(_ payload: CBOR) throws(SMPAnswerError) -> ImageState {
        guard let entries = payload["images"]?.arrayValue else { throw SMPAnswerError("image state", "has no images list") }
        var slots: [ImageSlot] = []
        for entry in entries {
            // A missing flag means false: Zephyr sends pending, confirmed, active, permanent only when set.
            func flag(_ name: String, default value: Bool = false) -> Bool { entry[name]?.boolValue ?? value }
            guard let slot = entry["slot"]?.intValue, let version = entry["version"]?.textValue else {
                throw SMPAnswerError("image state", "lists a slot without its number or version")
            }
            slots.append(
                ImageSlot(
                    image: entry["image"]?.intValue ?? 0, slot: slot, version: version, hash: entry["hash"]?.bytesValue,
                    bootable: flag("bootable", default: true), pending: flag("pending"), confirmed: flag("confirmed"),
                    active: flag("active"), permanent: flag("permanent")))
        }
        return ImageState(slots: slots)
    }
}

extension SMPClient {
    /// Image state read (image 0).
    public func imageState(timeout: Duration? = nil) async throws -> ImageState {
        try ImageState.decode(try await request(.read, group: SMPGroup.image, command: 0, timeout: timeout).payload)
    }

    /// Image state write: `confirm: false` marks the image with TLV hash `hash` for a test boot at
    /// the next reset (MCUboot reverts it unless confirmed); `confirm: true` makes it permanent,
    /// and with no hash confirms the image that runs. Returns the state after the change.
    public func setImageState(hash: [UInt8]?, confirm: Bool, timeout: Duration? = nil) async throws -> ImageState {
        var pairs: [CBOR.Pair] = []
        if let hash { pairs.append(CBOR.Pair(.text("hash"), .bytes(hash))) }
        pairs.append(CBOR.Pair(.text("confirm"), .bool(confirm)))
        return try ImageState.decode(
            try await request(.write, group: SMPGroup.image, command: 0, payload: .map(pairs), timeout: timeout).payload)
    }

    /// Image erase (image 5): clears the secondary slot (or `slot`), e.g. an upload nobody will finish.
    public func eraseImage(slot: Int? = nil, timeout: Duration? = nil) async throws {
        _ = try await request(
            .write, group: SMPGroup.image, command: 5, payload: slot.map { .map(["slot": .int($0)]) } ?? .map([]),
            timeout: timeout)
    }
}
