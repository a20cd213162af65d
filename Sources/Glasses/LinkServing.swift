// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import LinkKit

/// How a session serves the supervisor's links, whatever the glasses: one at a time, each from
/// its `up` until its own `down` or a newer `up`. `begin` runs before a link is served (in order
/// with the link events, on the caller's actor), `serve` for the link's life (cancelled when it
/// ends), `end` after it.
public func serveLinks(
    _ links: AsyncStream<LinkEvent>, isolation: isolated (any Actor)? = #isolation,
    begin: (UInt64) async -> Void,
    serve: @escaping @Sendable (any GlassesLink, UInt64) async -> Void,
    end: @escaping @Sendable (UInt64) async -> Void
) async {
    await withDiscardingTaskGroup { group in
        var running: (generation: UInt64, stop: OneShotEvent)?
        for await event in links {
            switch event {
            case .up(let link, let generation):
                running?.stop.fire()
                let stop = OneShotEvent()
                running = (generation, stop)
                await begin(generation)
                group.addTask {
                    await withTaskGroup(of: Void.self) { inner in
                        inner.addTask { await serve(link, generation) }
                        inner.addTask { await stop.wait() }
                        await inner.next()
                        inner.cancelAll()
                    }
                    await end(generation)
                }
            case .down(let generation, _):
                if running?.generation == generation { running?.stop.fire() }
            }
        }
        running?.stop.fire()
    }
}
