// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses

/// The product on the glasses: what the wearer does there reaches the voice questions and scene
/// mode, each through its own subscription to the session, made when this is created (before the
/// session serves a link), so neither misses an event and the bus layer only mirrors state.
public struct GlassesProduct<C: Clock>: Sendable where C.Duration == Duration {
    let voice: VoiceQueries<C>
    let scene: SceneWatch
    private let voiceEvents: AsyncStream<SessionEvent>
    private let sceneEvents: AsyncStream<SessionEvent>
    let claim: EventClaim

    public init(session: any GlassesSession, voice: VoiceQueries<C>, scene: SceneWatch, claim: EventClaim = EventClaim()) {
        self.voice = voice
        self.scene = scene
        self.claim = claim
        voiceEvents = session.subscribe()
        sceneEvents = session.subscribe()
    }

    /// Runs until cancelled; once only (the subscriptions are consumed).
    public func run() async {
        let (voiceInputs, voiceSink) = AsyncStream.makeStream(of: VoiceQueries<C>.Input.self)
        let (sceneInputs, sceneSink) = AsyncStream.makeStream(of: GlassesEvent.self)
        await withDiscardingTaskGroup { group in
            group.addTask { await voice.run(voiceInputs) }
            group.addTask { await scene.run(sceneInputs) }
            group.addTask {
                for await event in voiceEvents {
                    switch event {
                    case .status(let status): voiceSink.yield(.status(status))
                    case .glasses(let glasses): if !claim.route(glasses) { voiceSink.yield(.glasses(glasses)) }
                    }
                }
                voiceSink.finish()
            }
            group.addTask {
                for await case .glasses(let glasses) in sceneEvents { sceneSink.yield(glasses) }
                sceneSink.finish()
            }
        }
    }
}
