// SPDX-License-Identifier: GPL-2.0-or-later
import Frame
import Glasses

extension FrameApp {
    /// glassd's app for a Halo: the Frame's app with the Halo's hardware file (Sources/Halo/App).
    public static let halo = FrameApp(bundled: FrameApp.bundled, hardware: PackageResources.glassd_hw_lua)
}

extension FrameModel {
    /// Brilliant Halo: its own app; pages of 30 columns by 20 lines of the 8-px font (the 21st is
    /// the status); a speaker taking 16-bit PCM at 16 kHz on its audio channel; firmware updates
    /// over its SMP channel.
    public static let halo = FrameModel(
        app: .halo, pageLayout: AnswerLayout(columns: 30, lines: 20),
        speaker: (HaloChannel.audio, SpeakerFormat(codec: .pcm16, sampleRate: 16_000)), updateChannel: HaloChannel.smp)
}
