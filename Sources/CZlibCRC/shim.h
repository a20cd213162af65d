// SPDX-License-Identifier: GPL-2.0-or-later
// zlib's CRC-32 is the one Nordic's DFU bootloader computes: use it rather than a hand-written table.
#pragma once
#include <zlib.h>
