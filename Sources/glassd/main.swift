// SPDX-License-Identifier: GPL-2.0-or-later
import Frame
import GlassdCommand
import Halo
import Monocle

// The kinds of glasses glassd serves, in the order a device is matched against them: adding a
// kind is its target and its entry here. A Halo advertises as a Frame: it comes first.
await GlassdCommand.main(kinds: [.monocle, .halo, .frame])
