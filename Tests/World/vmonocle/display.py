# SPDX-License-Identifier: GPL-2.0-or-later
# Virtual Monocle: the display module (monocle-protocol.md §10). Every show() is sent to the host
# as a frame (JSON list of the drawn objects). Test-only.
import json
import _vmhost

WIDTH = 640
HEIGHT = 400
FONT_WIDTH = 24
FONT_HEIGHT = 48

WHITE = 0xFFFFFF
GRAY = 0x888888
RED = 0xAD2323
GREEN = 0x04D718
BLUE = 0x0000FF
CYAN = 0x00FFFF
MAGENTA = 0xFF00FF
YELLOW = 0xFFEE33
BLACK = 0x000000
CLEAR = 0x000000

TOP_LEFT = 1
TOP_CENTER = 2
TOP_RIGHT = 3
MIDDLE_LEFT = 4
MIDDLE_CENTER = 5
MIDDLE_RIGHT = 6
BOTTOM_LEFT = 7
BOTTOM_CENTER = 8
BOTTOM_RIGHT = 9


class TextOverlapError(Exception):
    pass


class _Obj:
    def move(self, x, y):
        self.x += x
        self.y += y
        return self

    def color(self, c):
        self.col = c
        return self


class Text(_Obj):
    def __init__(self, string, x, y, color, justify=TOP_LEFT):
        if justify < 1 or justify > 9:
            raise ValueError('unknown justify value')
        self.string = str(string)
        self.x = int(x)
        self.y = int(y)
        self.col = color
        self.justify = justify

    def box(self):
        w = len(self.string) * FONT_WIDTH
        h = FONT_HEIGHT
        col = (self.justify - 1) % 3
        row = (self.justify - 1) // 3
        return self.x - (w * col) // 2, self.y - (h * row) // 2, w, h

    def dump(self):
        x, y, w, h = self.box()
        return {'t': 'text', 's': self.string, 'x': x, 'y': y, 'w': w, 'h': h, 'c': self.col}


class Rectangle(_Obj):
    def __init__(self, x1, y1, x2, y2, color):
        self.x, self.y, self.x2, self.y2, self.col = x1, y1, x2, y2, color

    def move(self, x, y):
        self.x2 += x
        self.y2 += y
        return _Obj.move(self, x, y)

    def dump(self):
        return {'t': 'rect', 'p': [self.x, self.y, self.x2, self.y2], 'c': self.col}


class Fill(Rectangle):
    def __init__(self, color):
        Rectangle.__init__(self, 0, 0, WIDTH - 1, HEIGHT - 1, color)


class Line(_Obj):
    def __init__(self, x1, y1, x2, y2, color, thickness=1):
        self.x, self.y, self.x2, self.y2, self.col = x1, y1, x2, y2, color
        self.thickness = thickness

    def move(self, x, y):
        self.x2 += x
        self.y2 += y
        return _Obj.move(self, x, y)

    def dump(self):
        return {'t': 'line', 'p': [self.x, self.y, self.x2, self.y2], 'c': self.col,
                'k': self.thickness}


def HLine(x, y, width, color, thickness=1):
    return Line(x, y, x + width, y, color, thickness)


def VLine(x, y, height, color, thickness=1):
    return Line(x, y, x, y + height, color, thickness)


class Polyline(_Obj):
    def __init__(self, coords, color, thickness=1):
        self.coords = list(coords)
        self.x = self.y = 0
        self.col = color
        self.thickness = thickness

    def dump(self):
        pts = [v + (self.x if i % 2 == 0 else self.y) for i, v in enumerate(self.coords)]
        return {'t': 'poly', 'p': pts, 'c': self.col, 'k': self.thickness, 'closed': False}


class Polygon(Polyline):
    def dump(self):
        d = Polyline.dump(self)
        d['closed'] = True
        return d


def _flatten(objs, into):
    for o in objs:
        if isinstance(o, (list, tuple)):
            _flatten(o, into)
        elif isinstance(o, _Obj):
            into.append(o)
        else:
            raise TypeError('expected display objects')
    return into


def move(objs, x, y):
    for o in _flatten([objs], []):
        o.move(x, y)


def color(objs, c):
    for o in _flatten([objs], []):
        o.color(c)


def _overlap(a, b):
    ax, ay, aw, ah = a.box()
    bx, by, bw, bh = b.box()
    return ax < bx + bw and bx < ax + aw and ay < by + bh and by < ay + ah


def show(*objs):
    objs = _flatten(objs, [])
    texts = [o for o in objs if isinstance(o, Text)]
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            if _overlap(texts[i], texts[j]):
                raise TextOverlapError('Text objects overlap')
    _vmhost.send('F', json.dumps([o.dump() for o in objs]).encode())
    _vmhost.sleep_ms(20)


def clear():
    show()
