// SPDX-License-Identifier: GPL-2.0-or-later
import GlassdConfig
import Product
import GlassdContract
import Storage

// The stores the product writes to, as the product sees them.
extension SQLiteTranscriptionStore: TranscriptionRecords {}

extension PhotoStore: PhotoKeeping {}

extension BackendAbilities {
    /// What the configured servers can do: the embedded default backend is text only, and its
    /// speech server translates only when it says it has a multilingual model (Whisper base).
    init(_ config: Config) {
        let susi = config.assistantKind == "susi"
        // SUSI neither transcribes nor looks at photos: speech needs a [transcription] server.
        let hears = susi ? config.transcriptionURL != nil : !config.embedded || config.transcriptionURL != nil
        self.init(
            hears: hears, sees: !config.embedded && !susi,
            translates: hears
                && !(config.transcriptionEmbedded && config.transcriptionURL != nil && !config.transcriptionTranslates))
    }
}
