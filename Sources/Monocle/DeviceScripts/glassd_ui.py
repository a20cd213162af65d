# SPDX-License-Identifier: GPL-2.0-or-later
# glassd on the Monocle: the display. An answer area of 7 lines of 26 characters (word wrap,
# scrolled to the last lines) and a prompt line at the bottom.
import display

COLS = 26
ROWS = 7
MAX_TEXT = 1200
_segs = []        # [colour, text] pieces of the answer, oldest first
_prompt = ['', display.YELLOW]


def clear():
    del _segs[:]


def add(text, colour=display.WHITE):
    if _segs and _segs[-1][0] == colour:
        _segs[-1][1] += text
    else:
        _segs.append([colour, text])
    n = sum(len(s[1]) for s in _segs)
    while n > MAX_TEXT and _segs:        # keep the heap small: drop the oldest text
        cut = min(n - MAX_TEXT, len(_segs[0][1]))
        _segs[0][1] = _segs[0][1][cut:]
        n -= cut
        if not _segs[0][1]:
            _segs.pop(0)


def prompt(text, colour=display.YELLOW):
    _prompt[0] = text[:COLS]
    _prompt[1] = colour


def _lines():
    lines = []
    for colour, text in _segs:
        cur = None
        for para_i, para in enumerate(text.split('\n')):
            if para_i:
                cur = None
            for word in para.split(' '):
                if not word:
                    continue
                while len(word) > COLS:
                    lines.append([colour, word[:COLS]])
                    word = word[COLS:]
                    cur = None
                if cur is not None and len(cur[1]) + 1 + len(word) <= COLS:
                    cur[1] += ' ' + word
                else:
                    cur = [colour, word]
                    lines.append(cur)
    return lines[-ROWS:]


def draw():
    objs = []
    for i, (colour, text) in enumerate(_lines()):
        objs.append(display.Text(text, 0, i * 50, colour))
    if _prompt[0]:
        objs.append(display.Text(_prompt[0], 320, 400, _prompt[1],
                                 justify=display.BOTTOM_CENTER))
    display.show(objs)


def page(lines, colour=display.WHITE):
    """Lines shown as they are (a page glassd laid out: aligned columns keep their spaces)."""
    objs = [display.Text(t[:COLS], 0, i * 50, colour) for i, t in enumerate(lines[:ROWS]) if t.strip()]
    if _prompt[0]:
        objs.append(display.Text(_prompt[0], 320, 400, _prompt[1],
                                 justify=display.BOTTOM_CENTER))
    display.show(objs)


def screen(title, lines, colour=display.WHITE):
    """A centred title (row 1) and lines below it, then the prompt."""
    objs = [display.Text(title, 320, 50, display.CYAN, justify=display.TOP_CENTER)]
    for i, text in enumerate(lines[:4]):
        objs.append(display.Text(text[:COLS], 320, 150 + i * 50, colour,
                                 justify=display.TOP_CENTER))
    if _prompt[0]:
        objs.append(display.Text(_prompt[0], 320, 400, _prompt[1],
                                 justify=display.BOTTOM_CENTER))
    display.show(objs)
