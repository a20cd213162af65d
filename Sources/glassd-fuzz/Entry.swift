// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

// Built by Scripts/fuzz with -sanitize=fuzzer (and -D FUZZING): libFuzzer calls fuzzOne for each
// input, the target named by GLASSD_FUZZ_TARGET. Built plainly, glassd-fuzz replays files
// instead (`glassd-fuzz TARGET FILE...`): the tests run every corpus through every target.
#if FUZZING
import CFuzzer

/// Read once (libFuzzer runs one target per process).
private let selected: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["GLASSD_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget(rawValue: name) else {
        fatalError("GLASSD_FUZZ_TARGET must be one of: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    selected.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}

/// The entry point SwiftPM links as main: libFuzzer's driver, with its command line.
@_cdecl("glassd_fuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments, fuzzOne)
}
#else
@main
enum Replay {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
            FileHandle.standardError.write(
                Data("usage: glassd-fuzz TARGET FILE...  (TARGET: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")))\n".utf8))
            exit(2)
        }
        for path in arguments.dropFirst() {
            guard let bytes = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("glassd-fuzz: cannot read \(path)\n".utf8))
                exit(1)
            }
            target.run(Array(bytes))
        }
    }
}
#endif
