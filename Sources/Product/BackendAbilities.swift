// SPDX-License-Identifier: GPL-2.0-or-later

/// What the configured servers can do. The embedded default backend (Scripts/backend) serves a
/// text-only chat model and an English-only speech model: a question it cannot take fails at once with a
/// typed error that says what to configure, instead of after a request that ends in the
/// server's own 404 or 500.
public struct BackendAbilities: Sendable {
    /// Speech can be transcribed: any server but the embedded one, or a `[transcription]` server.
    public let hears: Bool
    /// Photos can be asked about: the embedded model is text only.
    public let sees: Bool
    /// Speech can be translated (translator mode): the embedded speech model knows English only.
    public let translates: Bool

    public init(hears: Bool, sees: Bool, translates: Bool) {
        self.hears = hears
        self.sees = sees
        self.translates = translates
    }
}
