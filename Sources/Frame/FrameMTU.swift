// SPDX-License-Identifier: GPL-2.0-or-later

/// The sizes one BLE write or notification allows on a Frame link, from the link's ATT payload
/// (`ByteChannel.maxPacketSize`, which is ATT MTU − 3).
///
/// The firmware's arithmetic (frame-protocol.md, "MTU"): an ATT attribute value is at most 512
/// bytes, so the usable MTU is `min(MTU, 512)`; a write or notification carries that less the 3
/// bytes of the ATT header. A Lua chunk fills the whole payload: `min(MTU, 512) − 3`. App data
/// gives one byte of it to the 0x01 prefix: `min(MTU, 512) − 4`, which is also what the device's
/// `frame.bluetooth.max_length()` reports. One `AppMessage` (code + payload) fits in `maxData`.
public struct FrameMTU: Sendable, Equatable {
    /// The ATT MTU (payload + 3).
    public let mtu: Int

    /// From the link's ATT payload size (MTU − 3).
    public init(attPayload: Int) {
        mtu = Swift.max(0, attPayload) + 3
    }

    public init(mtu: Int) {
        self.mtu = Swift.max(3, mtu)
    }

    /// The longest Lua chunk (or printed reply) in bytes: `min(MTU, 512) − 3`.
    public var maxLuaString: Int { Swift.min(mtu, 512) - 3 }

    /// The longest app data after the 0x01 prefix: `min(MTU, 512) − 4`; one `AppMessage`'s code
    /// and payload together.
    public var maxData: Int { maxLuaString - 1 }

    /// The longest payload of one `AppMessage`, after its code byte: `min(MTU, 512) − 5`.
    public var maxMessagePayload: Int { maxData - 1 }
}
