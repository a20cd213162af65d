// SPDX-License-Identifier: GPL-2.0-or-later
// pocketsphinx 5prealpha (Debian's libpocketsphinx-dev): the keyphrase search glassd's wake
// phrase uses. cmd_ln_init is variadic, so Swift builds its configuration with cmd_ln_parse_r.
#include <pocketsphinx.h>
