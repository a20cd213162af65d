// SPDX-License-Identifier: GPL-2.0-or-later
import Foundation
import Testing

@Suite("systemd and D-Bus files")
struct DeploymentFileTests {
    @Test("systemd-analyze verify prints nothing for glassd.service")
    func verifyUnit() async throws {
        // verify insists that ExecStart exists: point it at the binary just built.
        let dir = try Paths.temporaryDirectory()
        let unit = try String(contentsOfFile: Paths.root + "/systemd/glassd.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/local/bin/glassd\n"))
        try unit.replacingOccurrences(of: "ExecStart=/usr/local/bin/glassd", with: "ExecStart=\(Paths.glassd)")
            .write(toFile: dir + "/glassd.service", atomically: true, encoding: .utf8)
        let result = try await runCommand("systemd-analyze", ["verify", dir + "/glassd.service"])
        #expect(result.ok)
        #expect(result.stdout.isEmpty && result.stderr.isEmpty, "\(result.stdout)\(result.stderr)")
    }

    @Test("systemd-analyze security rates the unit 2.0 or better")
    func securityExposure() async throws {
        let result = try await runCommand(
            "systemd-analyze", ["security", "--offline=true", "--no-pager", Paths.root + "/systemd/glassd.service"])
        let line = try #require(result.stdout.split(separator: "\n").first { $0.contains("Overall exposure level") })
        // "→ Overall exposure level for glassd.service: 1.3 OK 🙂"
        let score = line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }
        #expect(score != nil && score! <= 2.0, "\(line)")
    }

    @Test("a system bus loads the glassd policy")
    func busPolicyParses() async throws {
        let dir = try Paths.temporaryDirectory()
        let config = try writeBusConfig(in: dir, type: "system", include: Paths.root + "/dbus/org.glassd.conf")
        let address = try await withBackground(
            "/usr/bin/dbus-daemon", ["--config-file=\(config)", "--nofork", "--print-address=1"],
            log: dir + "/dbus.log", firstLine: true
        ) { _, address in address }
        #expect(address.hasPrefix("unix:path=\(dir)/system.socket"))
        let service = try String(contentsOfFile: Paths.root + "/dbus/org.glassd.service", encoding: .utf8)
        #expect(service.contains("Name=org.glassd\n") && service.contains("SystemdService=glassd.service\n"))
    }
}
