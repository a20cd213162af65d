-- SPDX-License-Identifier: GPL-2.0-or-later
-- glassd's Lua app on a Brilliant Frame: the firmware runs this after a reset. The app file only
-- defines glassd_run(), so the host can load it, or resume it after a break, from the REPL.
require('glassd_app')
glassd_run()
