// SPDX-License-Identifier: GPL-2.0-or-later
import Logging
import Monocle

/// What glassd does with the questions the glasses ask (a tap, a hold). The voice and photo
/// pipeline is not built yet, so for now a finished question is answered, on the glasses, with
/// a clear message saying so, and the glasses are ready again.
struct DeviceRequests {
    let session: MonocleSession<ContinuousClock>
    let logger: Logger

    func handle(_ message: DataMessage) async {
        switch message {
        case .audioEnd:
            logger.info("a spoken question from the glasses: not answered yet (no voice pipeline)")
            do {
                try await session.show("Voice questions are not supported yet. Ask with glassctl query.", error: true)
            } catch {
                logger.info("cannot answer the glasses, ignoring: \(error)")
            }
            await session.answerFinished()
        case .cancelled:
            logger.info("the question was cancelled on the glasses")
        default:
            break
        }
    }
}
