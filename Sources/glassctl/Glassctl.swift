// SPDX-License-Identifier: GPL-2.0-or-later
import ArgumentParser
import GlassdAPI

@main
struct Glassctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "glassctl",
        abstract: "Talk to glassd, the smart-glasses daemon, over D-Bus.",
        version: glassdVersion,
        subcommands: [
            Query.self, History.self, ClearHistory.self, Stats.self, Status.self, ModeCommand.self, Scan.self, Pair.self,
            Unpair.self, Devices.self, Watch.self, Display.self, Notifications.self, GlanceCommand.self, Photo.self, Update.self,
            AgentCommand.self, NotifyAgent.self,
        ])
}
