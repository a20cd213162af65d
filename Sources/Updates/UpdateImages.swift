// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Glibc
import Glasses

/// The images an update installs, read whole and checked by their updaters before anything is sent.
public struct UpdateImages: Sendable {
    /// Each prepared by its updater, in the order their kind installs them (one per component).
    public private(set) var ordered: [ComponentImage]
    /// The kind of glasses the manifest pins these for; nil for files given to Update, which go to
    /// whatever glasses are paired.
    public var kind: GlassesKindName?

    public init(_ images: [ComponentImage] = [], kind: GlassesKindName? = nil) {
        var seen = Set<String>()
        ordered = images.filter { seen.insert($0.component).inserted }
        self.kind = kind
    }

    public subscript(_ component: String) -> ComponentImage? { ordered.first { $0.component == component } }
    public var isEmpty: Bool { ordered.isEmpty }

    /// A file given as a path, or the contents of one passed as a descriptor.
    public enum Source: Sendable {
        case path(String)
        case contents([UInt8])
    }

    /// The images of Update's options (component → file), prepared by the updaters of `kind`
    /// (the paired glasses', else the first registered kind that has the component); without any,
    /// those the manifest in `directory` pins.
    public static func load(
        _ sources: [String: Source], directory: String, kind: GlassesKind, kinds: [GlassesKind]
    ) throws(UpdateRefusal) -> UpdateImages {
        if sources.isEmpty { return try fromManifest(in: directory, kinds: kinds, paired: kind) }
        var images: [ComponentImage] = []
        for updater in updaters(for: Array(sources.keys), kind: kind, kinds: kinds) {
            guard let source = sources[updater.component] else { continue }
            images.append(try updater.prepare(try read(source, updater.component), version: nil, pinned: nil))
        }
        return UpdateImages(images)
    }

    /// The updaters of `components`: `kind`'s in its order, then other kinds' for the rest (an
    /// image for other glasses is refused as such once it is known to be a good image).
    static func updaters(for components: [String], kind: GlassesKind, kinds: [GlassesKind]) -> [any ComponentUpdater] {
        var found = kind.updaters.filter { components.contains($0.component) }
        for component in components where !found.contains(where: { $0.component == component }) {
            if let updater = kinds.lazy.compactMap({ $0.updater(component) }).first { found.append(updater) }
        }
        return found
    }

    /// The images the manifest in `directory` pins, prepared by the updaters of the kind it names.
    public static func fromManifest(
        in directory: String, kinds: [GlassesKind], paired: GlassesKind? = nil
    ) throws(UpdateRefusal) -> UpdateImages {
        let path = directory + "/" + FirmwareManifest.fileName
        guard FileManager.default.fileExists(atPath: path) else {
            throw UpdateRefusal(
                .notFound, "No update images: put them and a \(FirmwareManifest.fileName) in \(directory), or pass the files.")
        }
        let manifest = try FirmwareManifest.parse(try read(.path(path), "the manifest"), file: path, kinds: kinds)
        guard let kind = kinds.kind(named: manifest.kind) else { throw .image("\(path): no kind \(manifest.kind).") }
        var images: [ComponentImage] = []
        for updater in kind.updaters {
            guard let entry = manifest.entries[updater.component] else { continue }
            let bytes = try read(.path(directory + "/" + entry.file), updater.component)
            images.append(try updater.prepare(bytes, version: entry.version, pinned: entry.sha256))
        }
        return UpdateImages(images, kind: manifest.kind)
    }

    /// Largest file read: a DFU package or an FPGA image is well under this.
    public static let maxFileBytes = 4 << 20

    public static func read(_ source: Source, _ what: String) throws(UpdateRefusal) -> [UInt8] {
        switch source {
        case .contents(let bytes):
            return bytes
        case .path(let path):
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw .image("Cannot read \(what) \(path): \(String(cString: strerror(errno))).") }
            defer { close(fd) }
            return try read(fd, what)
        }
    }

    /// A file's bytes, read with pread (the descriptor's offset is not used). The caller closes `fd`.
    public static func read(_ fd: Int32, _ what: String) throws(UpdateRefusal) -> [UInt8] {
        // A pipe cannot seek: refused, as it could keep the call waiting for ever.
        let size = lseek(fd, 0, SEEK_END)
        guard size >= 0 else { throw .arguments("The \(what) must be a regular file.") }
        guard size <= maxFileBytes else { throw .image("The \(what) file is too large (\(size) bytes).") }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, $0.count - done, off_t(done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw .image("Cannot read \(what): \(n < 0 ? String(cString: strerror(errno)) : "it shrank").") }
            done += n
        }
        return bytes
    }
}
