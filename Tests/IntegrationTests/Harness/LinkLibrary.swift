// SPDX-License-Identifier: GPL-2.0-or-later
@testable import Bluetooth
import LinkKit
import Monocle

extension BLEWorld {
    /// The link library in this process (no glassd): a BlueZ client and a supervisor paired with
    /// virtual Monocle `index`, both running until `body` returns. `body` gets the supervisor,
    /// its link events (subscribed before the pairing) and the first link that came up.
    func withLinkLibrary(
        pairedWith index: Int, settings: LinkSettings = LinkSettings(adapter: "hci0", scanTimeout: .seconds(5), kinds: [.monocle]),
        _ body: (LinkSupervisor, AsyncStream<LinkEvent>, any GlassesLink) async throws -> Void
    ) async throws {
        try await withSupervisor(settings: settings) { supervisor, _ in
            let events = await supervisor.events()
            _ = try await supervisor.pair(Self.adapterAddress(index))
            let link = try await events.nextLink()
            try await body(supervisor, events, link)
        }
    }
}

extension AsyncStream<LinkEvent> {
    /// The next link that comes up.
    func nextLink() async throws -> any GlassesLink {
        for await event in self {
            if case .up(let link, _) = event { return link }
        }
        throw TestFailure("the link events ended before a link came up")
    }
}
