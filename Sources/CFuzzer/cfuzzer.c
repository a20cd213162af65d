// SPDX-License-Identifier: GPL-2.0-or-later
// Declarations only (include/cfuzzer.h); SwiftPM wants a source file in a C target.
#include "cfuzzer.h"
