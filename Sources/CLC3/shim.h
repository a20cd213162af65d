// SPDX-License-Identifier: GPL-2.0-or-later
// Google's liblc3 (Debian 12: liblc3-dev 1.0.1) for Swift: the LC3 codec Brilliant Halo speaks on
// its speaker and microphone. The header imports as is; the limits are macros with plain values,
// which Swift imports, and the parameter checks are macros with arguments, which it does not.
#pragma once
#include <lc3.h>
