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
import sys
import threading

# Python prints and drops an exception raised inside these (``__del__`` runs wherever garbage is collected, e.g.
# in llvmlite's finalizers during a numba compile): an interrupt raised there would be lost and the run go on
_SWALLOWING = frozenset({"__del__"})


def interrupt(signum: int, frame) -> None:
    """A handler that raises ``KeyboardInterrupt`` (SIGTERM handled like Ctrl-C), never into a frame that would
    swallow it: from inside a finalizer the signal is delivered again a moment later instead (a SIGTERM that
    arrived during a numba compile was lost that way and the run finished with exit code 0)."""
    f = frame
    while f is not None:
        if f.f_code.co_name in _SWALLOWING:
            threading.Timer(0.02, os.kill, (os.getpid(), signum)).start()
            return
        f = f.f_back
    raise _Interrupt(signum)


class _Interrupt(KeyboardInterrupt):
    """The handler's interrupt, knowing its signal (so a dropped one can be sent again)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum


def _resend_dropped(unraisable) -> None:
    """``sys.unraisablehook`` while :func:`interrupts` is in force: Python prints and drops an exception raised
    inside a weakref callback (multiprocessing's and numba's finalizers are ones) as it does inside a
    ``__del__``, and no frame name gives the callback away; such an interrupt is delivered again a moment
    later. Anything else goes to the hook before."""
    if isinstance(unraisable.exc_value, _Interrupt):
        threading.Timer(0.02, os.kill, (os.getpid(), unraisable.exc_value.signum)).start()
        return
    (_hooks[-1] if _hooks else sys.__unraisablehook__)(unraisable)


_hooks: list = []


@contextlib.contextmanager
def interrupts(signums: tuple[int, ...] = (signal.SIGTERM, signal.SIGINT)):
    """Inside the block, ``signums`` raise ``KeyboardInterrupt`` through :func:`interrupt` and an interrupt that
    Python drops is sent again; the handlers and the unraisable hook before are restored afterwards (main
    thread only: elsewhere Python delivers no signal)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.signal(s, interrupt) for s in signums}
    _hooks.append(sys.unraisablehook)
    sys.unraisablehook = _resend_dropped
    try:
        yield
    finally:
        sys.unraisablehook = _hooks.pop()
        for s, h in old.items():
            signal.signal(s, h)


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
