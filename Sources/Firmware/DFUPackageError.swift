// SPDX-License-Identifier: GPL-2.0-or-later

/// Why a DFU package was refused.
public enum DFUPackageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file could not be opened or read.
    case unreadable(String)
    /// The package file is larger than any application package could be.
    case packageTooLarge(size: Int, limit: Int)
    /// The package file's SHA-256 is not the pinned one.
    case checksumMismatch(expected: String, actual: String)
    /// Not a ZIP archive, or a damaged one.
    case corruptZip
    case missingManifest
    /// manifest.json is not the JSON a DFU package has.
    case invalidManifest(String)
    /// The package updates something other than the application (a SoftDevice, the bootloader).
    case notApplicationOnly([String])
    case missingFile(String)
    case emptyFile(String)
    case initPacketTooLarge(size: Int, limit: Int)
    case imageTooLarge(size: Int, limit: Int)
    /// The init packet is not the protobuf a DFU package has.
    case invalidInitPacket(String)
    /// The image is not the one the init packet describes.
    case imageSizeMismatch(image: Int, initPacket: Int)
    case imageHashMismatch

    public var description: String {
        switch self {
        case .unreadable(let why): "cannot read the package: \(why)"
        case .packageTooLarge(let size, let limit): "the package is \(size) bytes, over the \(limit)-byte limit"
        case .checksumMismatch(let expected, let actual): "the package's SHA-256 is \(actual), not \(expected)"
        case .corruptZip: "the package is not a readable ZIP archive"
        case .missingManifest: "the package has no manifest.json"
        case .invalidManifest(let why): "the package's manifest.json is invalid: \(why)"
        case .notApplicationOnly(let parts):
            "the package updates \(parts.joined(separator: ", ")); glassd only updates the application"
        case .missingFile(let name): "the package lacks \(name)"
        case .emptyFile(let name): "the package's \(name) is empty"
        case .initPacketTooLarge(let size, let limit): "the init packet is \(size) bytes, over \(limit)"
        case .imageTooLarge(let size, let limit): "the image is \(size) bytes, over \(limit)"
        case .invalidInitPacket(let why): "the init packet is invalid: \(why)"
        case .imageSizeMismatch(let image, let initPacket):
            "the image is \(image) bytes but the init packet says \(initPacket)"
        case .imageHashMismatch: "the image's SHA-256 is not the one in the init packet"
        }
    }
}
