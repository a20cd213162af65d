// SPDX-License-Identifier: GPL-2.0-or-later

/// speexdsp could not set up a state (out of memory, or a setting it refused), or the input is not one it takes.
public enum AudioError: Error, Sendable, Equatable {
    case resamplerInit(String)
    /// The glasses record in a format the recorder does not take.
    case unsupportedInput(String)
    case preprocessorInit
    /// speex_preprocess_ctl refused this request.
    case preprocessorSetting(request: Int32)
}
