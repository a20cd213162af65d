// SPDX-License-Identifier: GPL-2.0-or-later

/// The timeouts Brilliant's SDK gives an upload's answers: the first chunk's answer comes after
/// the device erased the secondary slot (up to 90 s), the others within 30 s.
public enum ImageUploadTimeouts {
    public static let firstChunk: Duration = .seconds(90)
    public static let chunk: Duration = .seconds(30)
}

/// One file's upload (image command 1): what every chunk request of it shares. The first
/// request (offset 0) carries the image number, the length and the whole file's SHA-256, which
/// names the upload on the device: the same first request again is answered with the offset the
/// device already holds, so an upload resumes. Later requests carry only the offset and data.
public struct ImageUpload: Sendable, Equatable {
    public var image: Int
    /// The file's length in bytes.
    public var length: Int
    /// SHA-256 of the whole file (the upload's `sha`), not the image's TLV hash.
    public var fileSHA256: [UInt8]
    /// `upgrade`: refuse an image not newer than the running one. nil: not sent (the device's default, false).
    public var upgradeOnly: Bool?

    public init(image: Int = 0, length: Int, fileSHA256: [UInt8], upgradeOnly: Bool? = nil) {
        self.image = image
        self.length = length
        self.fileSHA256 = fileSHA256
        self.upgradeOnly = upgradeOnly
    }

    /// The upload of `file`.
    public init(_ file: MCUbootImage, image: Int = 0, upgradeOnly: Bool? = nil) {
        self.init(image: image, length: file.bytes.count, fileSHA256: file.fileSHA256, upgradeOnly: upgradeOnly)
    }

    /// The request carrying `data` at `offset`.
    public func payload(offset: Int, data: some Collection<UInt8>) -> CBOR {
        guard offset == 0 else { return .map(["off": .int(offset), "data": .bytes(Array(data))]) }
        var pairs: [CBOR.Pair] = [
            CBOR.Pair(.text("image"), .int(image)), CBOR.Pair(.text("len"), .int(length)),
            CBOR.Pair(.text("off"), .int(0)), CBOR.Pair(.text("sha"), .bytes(fileSHA256)),
            CBOR.Pair(.text("data"), .bytes(Array(data))),
        ]
        if let upgradeOnly { pairs.append(CBOR.Pair(.text("upgrade"), .bool(upgradeOnly))) }
        return .map(pairs)
    }

    /// How many data bytes the request at `offset` can carry within `frameLimit` bytes (SMP
    /// header included), never more than the file has left: the request's other fields are
    /// encoded and measured, and the data's own length prefix grows with the data (1, 2 or 3
    /// bytes). `frameLimit` is the smaller of the device's buffer (`MCUmgrParameters`) and what
    /// the link takes in one request (`SMPClient.maxRequestSize`). 0: not even one byte fits.
    public func chunkCapacity(offset: Int, frameLimit: Int) -> Int {
        let left = max(0, length - offset)
        // The request with empty data: its data prefix is the 1 byte of a zero length.
        let fixed = SMPHeader.size + payload(offset: offset, data: []).encoded.count - 1
        var size = min(left, frameLimit - fixed - 1)
        while size > 0, fixed + CBOR.headSize(UInt64(size)) + size > frameLimit { size -= 1 }
        return max(0, size)
    }
}

/// The device's answer to an upload request: the offset it wants next (all it holds of this
/// upload), and after the last chunk whether the file's SHA-256 matched (`match`, when sent).
public struct ImageUploadAnswer: Sendable, Equatable {
    public var offset: Int
    public var match: Bool?

    public init(offset: Int, match: Bool? = nil) {
        self.offset = offset
        self.match = match
    }

    public static func decode(_ payload: CBOR) throws(SMPAnswerError) -> ImageUploadAnswer {
        guard let offset = payload["off"]?.intValue, offset >= 0 else { throw SMPAnswerError("image upload", "has no offset") }
        return ImageUploadAnswer(offset: offset, match: payload["match"]?.boolValue)
    }
}

extension SMPClient {
    /// Sends one chunk of `upload`: `data` at `offset`. The first chunk's answer can take up to
    /// `ImageUploadTimeouts.firstChunk` (the device erases first). Zephyr wants the first chunk to
    /// hold at least the image header (32 bytes), which any real buffer size allows.
    public func upload(
        _ upload: ImageUpload, offset: Int, data: ArraySlice<UInt8>, timeout: Duration? = nil
    ) async throws -> ImageUploadAnswer {
        let answer = try await request(
            .write, group: SMPGroup.image, command: 1, payload: upload.payload(offset: offset, data: data), timeout: timeout)
        return try ImageUploadAnswer.decode(answer.payload)
    }
}
