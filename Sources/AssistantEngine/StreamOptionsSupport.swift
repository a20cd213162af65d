// SPDX-License-Identifier: GPL-2.0-or-later
import Synchronization

/// Whether a chat server takes `stream_options`, shared by every copy of one client.
///
/// Most servers take it or ignore it; a strict one (a schema that forbids fields it does not
/// know) answers 400 naming it. The client then asks again at once without it and leaves it out
/// from then on: the token count is a nicety, not worth failing a question for, and asking
/// again with it every time would cost each question a round trip.
final class StreamOptionsSupport: Sendable {
    private let refused = Mutex(false)

    var accepted: Bool { !refused.withLock { $0 } }

    func markRefused() {
        refused.withLock { $0 = true }
    }

    /// Whether an HTTP 400's body is about `stream_options` (in the message or in `param`).
    static func isRefusal(status: Int, body: [UInt8]) -> Bool {
        status == 400 && String(decoding: body, as: UTF8.self).contains("stream_options")
    }
}
