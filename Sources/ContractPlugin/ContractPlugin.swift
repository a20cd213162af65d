// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import PackagePlugin

/// Generates the D-Bus contract's Swift code from dbus/org.glassd.*.xml at build time, so the
/// XML is the one source of names, signatures and a{sv} keys: GlassdAPI gets the names,
/// GlassdContract the method tables, signals, properties, structs and client proxies.
@main
struct ContractPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        let dbus = context.package.directoryURL.appending(path: "dbus")
        let files = try FileManager.default.contentsOfDirectory(at: dbus, includingPropertiesForKeys: nil)
            .filter { $0.lastPathComponent.hasPrefix("org.glassd.") && $0.pathExtension == "xml" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let mode = target.name == "GlassdAPI" ? "names" : "bus"
        let output = context.pluginWorkDirectoryURL.appending(path: "Contract+\(mode).swift")
        return [
            .buildCommand(
                displayName: "Generating the D-Bus contract (\(mode)) from dbus/*.xml",
                executable: try context.tool(named: "ContractGenerator").url,
                arguments: [mode, output.path] + files.map(\.path),
                inputFiles: files, outputFiles: [output])
        ]
    }
}
