// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer's driver, for glassd-fuzz built with -sanitize=fuzzer (Scripts/fuzz): SwiftPM names an
// executable's entry point after its module, so glassd-fuzz starts libFuzzer itself.
#pragma once
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
