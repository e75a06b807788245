"""Signals held off while numba returns big results.

Ctrl-C (SIGINT) and SIGTERM run their Python handlers between bytecodes; when that happens while numba boxes a
kernel's returned tuple of arrays, the handler's exception leaves numba's boxing code with a NULL it does not
check, and the process dies of a segmentation fault (reproduced: SIGTERM during a tree build). Inside
:func:`deferred_signals` those signals are only noted; the handlers in place before run once the block ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading


@contextlib.contextmanager
def deferred_signals(signums: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)):
    """Hold ``signums`` for the block's duration and deliver them to the previous handlers afterwards (main
    thread only: elsewhere Python delivers no signal, so there is nothing to hold)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []
    old = {s: signal.getsignal(s) for s in signums}
    for s in signums:
        signal.signal(s, lambda n, _f: got.append(n))
    try:
        yield
    finally:
        for s in signums:
            signal.signal(s, old[s])
        if got:
            h = old[got[0]]
            if callable(h):
                h(got[0], None)
            elif h == signal.SIG_DFL:
                os.kill(os.getpid(), got[0])
