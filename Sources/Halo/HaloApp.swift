// SPDX-License-Identifier: GPL-2.0-or-later
import Frame
import Glasses

extension FrameApp {
    /// glassd's app for a Halo: the Frame's app with the Halo's hardware file (Sources/Halo/App).
    public static let halo = FrameApp(bundled: FrameApp.bundled, hardware: PackageResources.glassd_hw_lua)
}

extension FrameModel {
    /// Brilliant Halo: its own app; pages of 30 columns by 20 lines of the 8-px font (the 21st is
    /// the status); a speaker taking LC3 on its audio channel: 16 kHz, 10 ms frames of 40 bytes
    /// (32 kbps: 4,000 bytes a second, an eighth of 16-bit PCM's on the link); firmware updates
    /// over its SMP channel.
    public static let halo = FrameModel(
        app: .halo, pageLayout: AnswerLayout(columns: 30, lines: 20),
        speaker: (HaloChannel.audio, SpeakerFormat(codec: .lc3(frameBytes: 40, frameMicros: 10_000), sampleRate: 16_000)),
        updateChannel: HaloChannel.smp)
}
