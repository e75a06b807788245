"""Files and memory: the one atomic writer, the one memory probe, stable hashes.

Every artifact the lab writes (checkpoints, tables, summaries) goes through
:func:`atomic_write`: written to a temporary file in the same folder, then
renamed, so an interrupted write never replaces a good file. Memory figures
come from :func:`peak_rss_gb` (the kernel's high-water mark, resettable with
:func:`reset_peak_rss` so a long-lived worker reports each job's own peak).
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import socket
from collections.abc import Callable
from pathlib import Path

import numpy as np


def atomic_write(path: str | Path, write: Callable[[Path], None], suffix: str = "") -> Path:
    """Call ``write(tmp)`` on a temporary path beside ``path``, then rename it over ``path``.

    ``suffix`` is appended to the temporary name for writers that insist on an
    extension (``numpy.savez`` adds ``.npz``). Temporary files that a killed
    writer on this host left beside ``path`` are removed first.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    tmp = path.with_name(f".{path.name}.{_HOST}.{os.getpid()}.{temporary_tag()}{suffix}")
    try:
        write(tmp)
        tmp.replace(path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


# the host is in the name because run folders may sit on storage shared by several machines,
# where a process number means something only on the machine that wrote it
_HOST = socket.gethostname().replace(".", "_") or "host"


def temporary_tag() -> str:
    """The end of a temporary's name: unique per thread too, so two threads of one process writing the same
    path (a match's in-process tasks storing one tree) never share, and delete, each other's temporary."""
    import threading

    return f"tmp{threading.get_ident():x}"


def remove_stale_temporaries(path: str | Path) -> list[Path]:
    """Delete ``path``'s temporaries whose writer (on this host) is no longer running; return them.

    A writer killed by SIGKILL or the kernel's OOM killer cannot run its cleanup, and a
    strategy table's temporary can be gigabytes.
    """
    path = Path(path)
    head = f".{path.name}.{_HOST}."
    gone = []
    # a prefix test over one listing: a glob per write cost 1.5 ms in a folder of 2,400 parts (a tenth of a
    # split cell's table pass)
    with os.scandir(path.parent) as it:
        names = [e.name for e in it if e.name.startswith(head)]
    for name in names:
        pid, _, rest = name[len(head):].partition(".")
        if rest.startswith("tmp") and pid.isdigit() and int(pid) != os.getpid() and not _running(int(pid)):
            tmp = path.parent / name
            if tmp.is_dir():  # a folder written whole, then renamed into place (a stored tree)
                import shutil

                shutil.rmtree(tmp, ignore_errors=True)
            else:
                tmp.unlink(missing_ok=True)
            gone.append(tmp)
    return gone


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: running
        return True
    return True


def write_json(path: str | Path, obj) -> Path:
    """Atomic JSON (floats as floats, numpy scalars converted)."""
    text = json.dumps(obj, indent=2, default=_json_default) + "\n"
    return atomic_write(path, lambda p: p.write_text(text))


def _json_default(x):
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


def read_json(path: str | Path, what: str = "file") -> dict:
    """Read a JSON object; a missing, empty or corrupt file raises ``ValueError`` naming it."""
    path = Path(path)
    try:
        obj = json.loads(path.read_text())
    except FileNotFoundError:
        raise ValueError(f"{what} {path} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{what} {path} is not readable JSON ({type(e).__name__})") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{what} {path} does not hold a JSON object")
    return obj


def stable_hash(obj, n: int = 16) -> str:
    """A hash of a JSON-able object that does not change between runs or machines."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=_json_default)
    return hashlib.sha256(text.encode()).hexdigest()[:n]


def rss_gb() -> float:
    """Resident memory of this process now (GB)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**30
    except OSError:
        return float("nan")


def total_memory_gb() -> float:
    """This machine's physical memory (GB); ``OSError`` when it cannot be read."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30
    except (ValueError, OSError, AttributeError):
        raise OSError("cannot tell this machine's memory (no sysconf): give --node-memory") from None


def available_memory_gb() -> float:
    """Memory the kernel could give a new job now (``MemAvailable``, GB; else the free physical pages).
    ``OSError`` when neither can be read: a memory guard must not pass by not knowing."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30
    except (ValueError, OSError, AttributeError):
        raise OSError("cannot tell how much memory is available (no /proc/meminfo, no sysconf)") from None


def peak_rss_gb() -> float:
    """Peak resident memory of this process since start or the last :func:`reset_peak_rss` (GB)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def reset_peak_rss() -> None:
    """Start a new peak (Linux ``clear_refs``); silently a no-op elsewhere."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_MMAP_MAX = -4


def _libc():
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


def keep_freed_memory(on: bool = True) -> bool:
    """Make glibc's allocator keep memory a process frees for its next allocations: big blocks from the heap
    instead of their own mappings (returned to the system on free), and no trimming; ``on=False`` restores
    glibc's defaults. A solve and a table writer allocate and free gigabytes, and on this machine (a VM) memory
    new to a process costs 0.3-2 ms per MB to touch. Not for a tree build: its growing buffers leave holes the
    heap cannot reuse (a 4x4 cell's build and solve peaked at 21.9 GB kept, 15.3 GB with the defaults). Pair
    with :func:`release_freed_memory` between phases. Off with ``SOLVERS_KEEP_FREED=0``; False (and nothing
    done) there or without glibc."""
    if on and os.environ.get("SOLVERS_KEEP_FREED", "1") == "0":
        return False
    libc = _libc()
    if libc is None:
        return False
    if not on:  # glibc's defaults (a fixed mmap threshold at its default start)
        return bool(libc.mallopt(_M_MMAP_MAX, 65536)) and bool(libc.mallopt(_M_TRIM_THRESHOLD, 128 * 1024)) \
            and bool(libc.mallopt(_M_MMAP_THRESHOLD, 128 * 1024))
    # the threshold is a C int that glibc reads as a size: -1 is the largest, i.e. never trim
    return bool(libc.mallopt(_M_MMAP_MAX, 0)) and bool(libc.mallopt(_M_TRIM_THRESHOLD, -1))


def release_freed_memory() -> None:
    """Give the memory freed so far back to the system (``malloc_trim``): between tasks, so a task's peak and
    the next task's room are its own."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
