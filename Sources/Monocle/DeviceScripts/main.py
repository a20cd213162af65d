# SPDX-License-Identifier: GPL-2.0-or-later
# glassd on the Monocle: the state machine. A tap records a question (ast:, dat:..., aen:), a
# hold takes a photo first (ist:, idt:..., ien:, then the question). Answers stream in as res:
# (err: in red, dsp: replaces the text) until end:; a tap meanwhile cancels (can:). In scene mode
# the host asks for frames (cap: -> sst:, idt:..., sen:) and shows hazards (alr:, empty clears).
# A laid-out answer comes as pages (pga:... with form feeds between pages, then pgs:); a tap turns
# the page, and after the last one the glasses are ready again. With the wake phrase on (lsn:1),
# idle glasses stream what they hear (lis:); wak: starts a question as a tap would. Both pads
# pressed on idle glasses ask for the glance (gla:), no question; elsewhere they act as a tap.
# run() starts it, and can be called again from the REPL.
import os
import time
import device
import display
import touch
import bluetooth
import glassd_ui as ui
import glassd_link as link
import glassd_media as media

HOLD_MS = 1250
RECORD_S = 30
IDLE, REC, PHOTO_Q, WAIT, ANSWER, PAGED = 0, 1, 2, 3, 4, 5
MAX_PAGES_TEXT = 4000
# A heading waits this long for its text (a notification's body is the next message), so the two
# are drawn as one; a streamed answer's first words may take longer, and then it shows alone.
HEADING_WAIT_MS = 250
TAP_PROMPT = 'Tap to speak'
S = {}


def _touched(button):
    if S.get('press') is None:
        S['press'] = time.ticks_ms()
    if button == 'BOTH':
        S['both'] = True


def _gesture():
    """'tap', 'hold', 'both' or None, from the press the touch callback noted. A finger lands on
    one pad first: a press is 'both' once both were touched, and ends when both are let go."""
    t = S.get('press')
    if t is None:
        return None
    pads = touch.state()
    if pads == 'BOTH':
        S['both'] = True
    if S['both']:
        if pads:
            return None
        S['press'], S['both'] = None, False
        return 'both'
    if time.ticks_diff(time.ticks_ms(), t) >= HOLD_MS:
        S['press'] = None
        return 'hold'
    if not pads:
        S['press'] = None
        return 'tap'
    return None


def _text(payload):
    try:
        return payload.decode()
    except Exception:
        return ''.join(chr(b) for b in payload if 32 <= b < 127)


def _prompt(text, colour=display.YELLOW):
    ui.prompt(text, colour)
    ui.draw()


def _start_recording(photo):
    S['state'] = PHOTO_Q if photo else REC
    ui.clear()
    media.record(RECORD_S)
    if photo:
        link.send(b'ien:')
    else:
        link.send(b'ast:', media.FORMAT)
    S['shown'] = -1
    _show_recording()


def _show_recording():
    s = media.elapsed_s()
    if s != S['shown']:
        S['shown'] = s
        _prompt(('* Ask about it %ds' if S['state'] == PHOTO_Q else '* Listening %ds') % s,
                display.RED)


def _woken(payload):
    """The host heard the wake phrase: a question, as if tapped, saying so."""
    _start_recording(False)
    ui.add(_text(payload), display.YELLOW)
    ui.draw()


def _stop_recording():
    link.send(b'aen:')
    S['state'] = WAIT
    _prompt('Waiting for the answer')


def _photo():
    _prompt('Taking a photo')
    media.photo(b'ist:', media.FORMAT)
    _start_recording(True)


def _on_message(msg):
    cmd, payload = msg[:4], msg[4:]
    st = S['state']
    if cmd in (b'res:', b'err:', b'dsp:'):
        if st in (REC, PHOTO_Q):
            return              # a late answer to an earlier question
        if cmd == b'dsp:' or st == PAGED:
            ui.clear()
        if st == PAGED:
            st = S['state'] = IDLE
        ui.add(_text(payload), display.RED if cmd == b'err:' else display.WHITE)
        if cmd != b'dsp:' and st in (IDLE, WAIT):
            S['state'] = ANSWER
            S['hint'] = None
            ui.prompt('Tap to stop')
        if cmd == b'dsp:':
            S['held'] = time.ticks_add(time.ticks_ms(), HEADING_WAIT_MS)
        else:
            S['held'] = None
            ui.draw()
    elif cmd == b'end:':
        held, S['held'] = S['held'], None
        if st in (WAIT, ANSWER):
            S['state'] = IDLE
            _prompt(TAP_PROMPT)
        elif held is not None:
            ui.draw()
    elif cmd == b'pga:':
        S['pbuf'] = (S['pbuf'] + _text(payload))[:MAX_PAGES_TEXT]
    elif cmd == b'pgs:':
        pages, S['pbuf'] = S['pbuf'].split('\f'), ''
        if st not in (REC, PHOTO_Q):
            S['pages'], S['page'], S['state'] = pages, 0, PAGED
            _show_page()
    elif cmd == b'pin:':
        link.send(b'pon:', payload)
    elif cmd == b'ick:':
        if st == WAIT:
            S['state'] = IDLE
            _prompt(TAP_PROMPT)
    elif cmd == b'stp:':
        if st in (REC, PHOTO_Q):
            _stop_recording()
    elif cmd == b'cap:':
        if st == IDLE:
            media.photo(b'sst:')
            link.send(b'sen:')
    elif cmd == b'lsn:':
        S['listen'] = payload == b'1'
        if not S['listen'] and media.listening():
            media.deaf()
    elif cmd == b'wak:':
        if st in (IDLE, PAGED):     # pages being read: the phrase asks the next question
            S['pages'] = []
            _woken(payload)
    elif cmd == b'alr:':
        if st == IDLE:
            ui.clear()
            if payload:
                ui.add(_text(payload), display.YELLOW)
            ui.prompt(TAP_PROMPT)
            ui.draw()


def _show_page():
    last = S['page'] + 1 >= len(S['pages'])
    ui.prompt(TAP_PROMPT if last else 'Tap for more', display.YELLOW)
    ui.page(S['pages'][S['page']].split('\n'))


def _on_gesture(g):
    st = S['state']
    if st == PAGED:
        if g == 'tap' and S['page'] + 1 < len(S['pages']):
            S['page'] += 1
            _show_page()
            return
        # The last page says "Tap to speak": the tap (or a hold) asks the next question.
        S['state'], S['pages'] = IDLE, []
        st = IDLE
    if st in (REC, PHOTO_Q):
        _stop_recording()
    elif st in (WAIT, ANSWER):
        link.send(b'can:')
        S['state'] = IDLE
        _prompt('Cancelled. ' + TAP_PROMPT)
    elif g == 'both':
        link.send(b'gla:')
    elif g == 'hold':
        _photo()
    else:
        _start_recording(False)


def _battery():
    now = time.ticks_ms()
    if S['bat_t'] is not None and time.ticks_diff(now, S['bat_t']) < 60000:
        return
    S['bat_t'] = now
    level = device.battery_level()
    if level != S['bat']:
        if link.send(b'bat:', str(level)):
            S['bat'] = level


def _step():
    connected = bluetooth.connected()
    if connected and not S['ready']:
        S['ready'] = link.send(b'rdy:')
        S['bat'] = None
        S['bat_t'] = None
    elif not connected:
        S['ready'] = False
        S['listen'] = False
    msg = link.take()
    while msg is not None:
        _on_message(msg)
        msg = link.take()
    link.ack()
    if S['held'] is not None and time.ticks_diff(time.ticks_ms(), S['held']) >= 0:
        S['held'] = None
        ui.draw()
    g = _gesture()
    if g:
        _on_gesture(g)
    if S['state'] in (REC, PHOTO_Q):
        if media.pump():
            _show_recording()
        else:
            _stop_recording()
        return 2
    if S['ready']:
        _battery()
    if S['listen'] and S['state'] in (IDLE, PAGED):
        if not media.listening():
            media.listen()
        if not media.pump():
            media.deaf()    # a stretch ended (or stalled): the next step starts another
        return 5
    if media.listening():
        media.deaf()        # busy: what it hears meanwhile is not for the wake phrase
    if S['state'] == IDLE and S['hint'] is not None and time.ticks_diff(
            time.ticks_ms(), S['hint']) > 0:
        S['hint'] = None
        _prompt(TAP_PROMPT)
    return 20


def run():
    S.clear()
    S.update(state=IDLE, press=None, both=False, ready=False, listen=False, bat=None, bat_t=None, hint=None, shown=-1, pbuf='', pages=[],
             page=0, held=None)
    link.start()
    touch.callback(touch.EITHER, _touched)
    touch.callback(touch.BOTH, _touched)
    ui.clear()
    try:
        os.stat('glassd_new')
        fresh = True
    except OSError:
        fresh = False
    if fresh:
        ui.prompt(TAP_PROMPT)
        ui.screen('glassd', ['Tap to speak,', 'hold for a photo,', 'both pads: the glance'])
        try:
            os.remove('glassd_new')
        except OSError:
            pass
    else:
        _prompt('Connected')
        S['hint'] = time.ticks_add(time.ticks_ms(), 1500)
    while True:
        try:
            pause = _step()
        except KeyboardInterrupt:
            raise
        except Exception as e:      # never stop on bad input: say it, go back to idle
            S['state'] = IDLE
            S['press'], S['both'] = None, False
            try:
                ui.add(' ' + str(e), display.RED)
                _prompt(TAP_PROMPT)
            except Exception:
                pass
            pause = 100
        time.sleep_ms(pause)


run()
