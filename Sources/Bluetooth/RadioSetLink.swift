// SPDX-License-Identifier: GPL-2.0-or-later
import LinkKit

/// Glasses of more than one radio as one link: up only while every radio is connected, each
/// radio's channels named by `RadioChannel.named(_:on:)` ("left/serial"), so a session speaks
/// to either arm.
struct RadioSetLink: GlassesLink {
    let profile: GATTProfile
    let radios: [(role: String, link: any GlassesLink)]

    func channel(_ name: String) -> (any ByteChannel)? {
        guard let slash = name.firstIndex(of: "/") else { return nil }
        let role = name[..<slash]
        return radios.first { $0.role == role }?.link.channel(String(name[name.index(after: slash)...]))
    }
}
