// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation

// ContractGenerator MODE OUTPUT FILE.xml...: writes the Swift code for D-Bus interfaces the files
// describe. MODE names: the interface and member names (GlassdAPI); bus: the method tables,
// signals, properties, a{sv} structs and client proxies (GlassdContract).
let arguments = CommandLine.arguments.dropFirst()
guard arguments.count >= 3, let mode = arguments.first, ["names", "bus"].contains(mode) else {
    FileHandle.standardError.write(Data("usage: ContractGenerator names|bus OUTPUT FILE.xml...\n".utf8))
    exit(64)
}
let output = arguments.dropFirst().first!
do {
    var interfaces: [Interface] = []
    for path in arguments.dropFirst(2) {
        let file = URL(fileURLWithPath: path).lastPathComponent
        let root = try XMLTree.parse(try Data(contentsOf: URL(fileURLWithPath: path)), file: file)
        for element in root.elements("interface") { interfaces.append(try Interface(element, file: file)) }
    }
    interfaces.sort { $0.name < $1.name }
    let code = mode == "names" ? NamesEmitter.emit(interfaces) : BusEmitter.emit(interfaces)
    // Unchanged output keeps its date, so nothing that depends on it is rebuilt.
    if (try? String(contentsOfFile: output, encoding: .utf8)) != code {
        try code.write(toFile: output, atomically: true, encoding: .utf8)
    }
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
