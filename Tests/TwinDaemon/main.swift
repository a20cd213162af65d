// SPDX-License-Identifier: GPL-2.0-or-later
import FakeKinds
import Frame
import GlassdCommand
import Monocle

// glassd as a test builds it, with the test-only two-radio kind registered first (its arms
// advertise the Nordic UART service, as a Monocle does): the one line a new kind adds.
await GlassdCommand.main(kinds: [twin(), .monocle, .frame])
