// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

/// The raw-REPL commands of an FPGA image update (monocle-protocol.md §6). Every write names the
/// offset it expects the device to be at, and the device keeps its own count (`_gf`): so a chunk
/// repeated after a lost reply is skipped there instead of appended twice (`update.Fpga.write`
/// only appends), and a device out of step says so with the count it has.
public enum FPGACommands {
    /// Where the firmware looks for `done` at boot: the end of the 444,430-byte image.
    public static let doneOffset = 0x6C80E
    /// `update.Fpga.read` is asked for at most this much at a time (the firmware's limit is not
    /// documented; 255 is what its other reads allow).
    public static let readPiece = 255
    /// The device's write count.
    static let counter = "_gf"

    /// Stops the FPGA, erases its flash area (109 pages) and starts the count at 0. Prints `erased`.
    public static let prepare = """
        import ubinascii,update,fpga
        fpga.run(False)
        update.Fpga.erase()
        \(counter)=0
        print('erased')
        """

    static let chunkPrefix = "if \(counter)==0000000:update.Fpga.write(ubinascii.a2b_base64(b'"
    static let chunkSuffix = "'));\(counter)+=0000000\nprint(\(counter))"

    /// Image bytes per write command such that the command (and its Ctrl-D) fits `maxCommandBytes`.
    public static func bytesPerChunk(maxCommandBytes: Int) -> Int {
        let room = maxCommandBytes - 1 - chunkPrefix.utf8.count - chunkSuffix.utf8.count
        // Base64 comes in groups of 4 characters for 3 bytes.
        return max(3, room / 4 * 3)
    }

    /// Writes `bytes` at `offset` unless the device's count shows it is past it; prints the count.
    public static func write(_ bytes: some Collection<UInt8>, at offset: Int) -> String {
        "if \(counter)==\(offset):update.Fpga.write(ubinascii.a2b_base64(b'\(Data(bytes).base64EncodedString())'));"
            + "\(counter)+=\(bytes.count)\nprint(\(counter))"
    }

    /// Fills the rest of the image area with 0xFF (a no-op on erased flash) so that `done` lands
    /// at `doneOffset` whatever the image's size. Prints the count.
    public static let pad = """
        while \(counter)<\(doneOffset):
         n=min(\(doneOffset)-\(counter),256)
         update.Fpga.write(b'\\xff'*n)
         \(counter)+=n
        print(\(counter))
        """

    /// SHA-256 of the flash from `start` up to `end`, read back in pieces; prints it in hex.
    public static func digest(from start: Int, to end: Int) -> String {
        """
        def _gv(a,b):
         import hashlib,ubinascii,update
         h=hashlib.sha256()
         while a<b:
          n=min(b-a,\(readPiece))
          h.update(update.Fpga.read(a,n))
          a+=n
         print(ubinascii.hexlify(h.digest()).decode())
        _gv(\(start),\(end))
        del _gv
        """
    }

    /// Marks the image valid, only if the device wrote exactly up to `doneOffset`. Prints the count.
    public static let markDone = "if \(counter)==\(doneOffset):update.Fpga.write(b'done')\nprint(\(counter))"

    /// Resets the device: the firmware then boots the FPGA from the new image. The link drops.
    public static let reset = "import device\ndevice.reset()"

    /// Starts the data-channel receiver (DeviceScripts/glassd_receiver.py) for an image of `size`
    /// bytes, written to the FPGA's flash. It returns to the REPL when done, printing the count.
    public static func receiver(size: Int) -> String {
        receiverDefinition + "\nimport update\n_gfr(\(size),update.Fpga.write)"
    }

    /// The receiver's definition: comment lines left out and indentation narrowed so it fits one
    /// command.
    public static var receiverDefinition: String {
        let source = String(decoding: PackageResources.glassd_receiver_py, as: UTF8.self)
        var lines: [String] = []
        for line in source.split(separator: "\n") {
            let body = line.drop { $0 == " " }
            if body.isEmpty || body.hasPrefix("#") { continue }
            lines.append(String(repeating: " ", count: (line.count - body.count) / 4) + body)
        }
        return lines.joined(separator: "\n")
    }

    /// The data-channel prefix of an image chunk (host to device); the device answers with
    /// `ackPrefix` and its count, or `errorPrefix` and a message.
    public static let dataPrefix = Array("fpg:".utf8)
    public static let ackPrefix = Array("fpa:".utf8)
    public static let errorPrefix = Array("fpe:".utf8)
    /// Host to device: stop receiving (the transfer failed).
    public static let stopPrefix = Array("fpx:".utf8)
    /// Prefix and the 4-byte offset.
    public static let dataHeader = 8

    /// One chunk for the receiver: `fpg:`, the offset (u32 big-endian), the bytes.
    public static func dataFrame(_ bytes: some Collection<UInt8>, at offset: Int) -> [UInt8] {
        let o = UInt32(offset)
        return dataPrefix + [UInt8(o >> 24), UInt8(o >> 16 & 0xFF), UInt8(o >> 8 & 0xFF), UInt8(o & 0xFF)] + bytes
    }

    /// The FPGA's version register, as the check reads it.
    public static let version = "import fpga\nprint(fpga.read(2,12).decode())"
}
