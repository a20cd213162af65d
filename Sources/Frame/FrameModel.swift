// SPDX-License-Identifier: GPL-2.0-or-later
import Glasses

/// What differs between the glasses the Frame session serves (a Frame, a Halo): the app it
/// uploads (its hardware file), the pages' size on the display, and the speaker, if any.
public struct FrameModel: Sendable {
    public var app: FrameApp
    public var pageLayout: AnswerLayout
    /// The link channel the speaker's audio is written to, and what it plays; nil: no speaker.
    public var speaker: (channel: String, format: SpeakerFormat)?
    /// The link channel the session lends to a firmware updater (`UpdateChannelAccess`); nil: none.
    public var updateChannel: String?

    public init(
        app: FrameApp, pageLayout: AnswerLayout, speaker: (channel: String, format: SpeakerFormat)? = nil,
        updateChannel: String? = nil
    ) {
        self.app = app
        self.pageLayout = pageLayout
        self.speaker = speaker
        self.updateChannel = updateChannel
    }

    /// Brilliant Frame: 24 characters (its font is proportional) by 5 lines (the sixth is the
    /// app's status); no speaker.
    public static let frame = FrameModel(app: .bundled, pageLayout: AnswerLayout(columns: 24, lines: 5))
}
