# SPDX-License-Identifier: GPL-2.0-or-later
# Virtual Monocle: the low-level camera power helpers. Test-only.


def wake():
    pass


def sleep():
    pass
