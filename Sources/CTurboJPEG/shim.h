// SPDX-License-Identifier: GPL-2.0-or-later
// libjpeg-turbo's TurboJPEG API for Swift (the 2.x functions: Debian 12 has 2.1.5, without tj3*).
// TJSCALED is a macro, which Swift does not import: the same arithmetic as a function.
#pragma once
#include <turbojpeg.h>

static inline int ctj_scaled(int dimension, tjscalingfactor factor) {
    return TJSCALED(dimension, factor);
}
