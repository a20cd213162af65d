// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses

/// The raw-REPL commands of a session: MicroPython source, printable ASCII only, each within the
/// device's receive ring. No user text ever goes into one (that travels on the data channel).
public enum DeviceCommands {
    /// One round trip: firmware and FPGA versions, battery, the running and the stored script
    /// versions (the stored one hashed on the device the way `DeviceScripts.version` is, the
    /// stamp line left out, so a script edited on the device shows as different).
    public static func check(_ scripts: DeviceScripts) -> String {
        let names = scripts.files.map { "'\($0.name)'" }.joined(separator: ",")
        return """
            def _gc():
             import hashlib,binascii
             def q(f):
              try:
               return f()
              except Exception:
               return '?'
             def fw():
              import device
              return device.VERSION
             def fp():
              import fpga
              return fpga.read(2,12).decode()
             def bt():
              import device
              return device.battery_level()
             def sv():
              h=hashlib.sha256()
              for n in (\(names)):
               try:
                f=open(n,'rb')
               except OSError:
                return '-'
               h.update(n.encode()+b'\\0')
               if n=='\(DeviceScripts.mainFile)':
                l=f.readline()
                if not l.startswith(b'\(DeviceScripts.versionName) ='):
                 h.update(l)
               while True:
                b=f.read(256)
                if not b:
                 break
                h.update(b)
               f.close()
               h.update(b'\\0')
              return binascii.hexlify(h.digest()).decode()
             print(q(fw))
             print(q(fp))
             print(q(bt))
             print(globals().get('\(DeviceScripts.versionName)','-'))
             print(sv())
            _gc()
            del _gc
            """
    }

    /// Parses the reply of `check`.
    public static func parseCheck(_ stdout: String) throws(ReplError) -> DeviceInfo {
        let lines = stdout.split(whereSeparator: \.isNewline).map(String.init)
        guard lines.count == 5 else { throw .unexpectedReply("a device check gave \(lines.count) lines") }
        func version(_ s: String) -> String? { s == "-" || s == "?" || s.isEmpty ? nil : s }
        return DeviceInfo(
            versions: [
                ComponentName.firmware: lines[0] == "?" ? "" : lines[0],
                FPGAUpdater.name: lines[1] == "?" ? "" : String(lines[1].unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F }),
            ],
            battery: UInt8(lines[2]).flatMap { $0 <= 100 ? $0 : nil },
            runningScripts: version(lines[3]), storedScripts: version(lines[4]))
    }

    /// Resumes the scripts' main loop without a reboot (their globals survive the Ctrl-C).
    public static let resume = "run()"

    /// Resets into the Nordic bootloader (the firmware's own update module, monocle-protocol.md §4).
    public static let enterBootloader = "import update\nupdate.micropython()"
}
