// SPDX-License-Identifier: GPL-2.0-or-later
// speexdsp's resampler and preprocessor for Swift. speex_preprocess_ctl takes its value through a
// void pointer whose type depends on the request; the integer settings get typed wrappers.
#pragma once
#include <speex/speex_preprocess.h>
#include <speex/speex_resampler.h>

static inline int cspx_preprocess_set_int(SpeexPreprocessState *st, int request, spx_int32_t value) {
    return speex_preprocess_ctl(st, request, &value);
}

static inline spx_int32_t cspx_preprocess_get_int(SpeexPreprocessState *st, int request) {
    spx_int32_t value = 0;
    speex_preprocess_ctl(st, request, &value);
    return value;
}
