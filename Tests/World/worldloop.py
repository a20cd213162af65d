# SPDX-License-Identifier: GPL-2.0-or-later
"""The event-loop frame the world's programs share: run until SIGTERM/SIGINT, then cancel what
is left and close cleanly (exit status 0)."""
import asyncio
import signal


def run_until_signalled(main):
    """Runs `main(stop)` (a coroutine function given an asyncio.Event set on SIGTERM/SIGINT)."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        loop.run_until_complete(main(stop))
    finally:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.close()
    return 0
