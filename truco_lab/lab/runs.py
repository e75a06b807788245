"""Run folders: who owns an ``--out`` folder, and progress bars with an ETA.

A run folder holds ``run.json`` naming the run (its kind and the stable hash
of what it solves). A folder of another run is refused (``--fresh``
overwrites it), so tables of two runs never mix; the same run is continued
only with ``--resume``. Every check happens before any solving, including
whether the folder is writable.
"""

from __future__ import annotations

import datetime
import fcntl
import math
import os
import shutil
from pathlib import Path

from solvers.storage import read_json, write_json

OWNED = ("run.json", "summary.json", "equity.parquet", "equity.png", "checkpoints", "results", "cells", "parts",
         "trees")  # parts: a streamed solve's, kept for a resume; trees: a match's tree store


class RunError(ValueError):
    """A run folder cannot be used as asked (one line, names the folder or option)."""


def claim(out: Path, kind: str, key: str, describe: dict, *, resume: bool, fresh: bool) -> bool:
    """Make ``out`` this run's folder. Returns True when an earlier part of this run is there.

    Raises :class:`RunError` for: an unwritable folder, a folder of another run (without
    ``fresh``), the same run without ``resume``, ``resume`` with nothing to resume, or a
    corrupt ``run.json``.
    """
    refuse_conflicting(resume, fresh)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise RunError(f"--out {out} is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise RunError(f"--out {out} is not writable ({e.strerror or type(e).__name__})") from None
    lock_folder(out)  # before --fresh may delete anything: never under another process still running there
    stamp = out / "run.json"
    contents = [p for p in out.iterdir() if not p.name.startswith(".")]
    if fresh and contents:
        foreign = [p.name for p in contents if p.name not in OWNED and not p.name.endswith((".parquet", ".json"))]
        if foreign:
            raise RunError(f"--fresh: {out} holds files this tool did not write ({', '.join(sorted(foreign)[:3])}); "
                           "choose another --out")
        for p in contents:
            shutil.rmtree(p) if p.is_dir() else p.unlink()
        contents = []
    if not contents:
        if resume:
            raise RunError(f"--resume: {out} holds no run to resume")
        write_json(stamp, {"kind": kind, "key": key, "describe": describe,
                           "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")})
        return False
    if not stamp.exists():
        raise RunError(f"--out {out} is not empty and holds no run.json (another tool's files or an older "
                       "version's run): choose another --out, or --fresh to overwrite")
    try:
        old = read_json(stamp, "run file")
    except ValueError as e:
        raise RunError(f"{e}: choose another --out, or --fresh to overwrite") from None
    if old.get("kind") != kind or old.get("key") != key:
        diff = _difference(old.get("describe", {}), describe)
        raise RunError(f"--out {out} holds another run ({old.get('kind')}, {diff}): choose another --out, "
                       "or --fresh to overwrite it")
    if not resume:
        raise RunError(f"--out {out} holds this run already: add --resume to continue it (finished cells are "
                       "reported again), or --fresh to start over")
    return True


def as_begun(out: Path, kind: str, describe: dict, formers: dict) -> dict:
    """The fields of ``formers`` (field -> what a default was before it changed) that ``out``'s ``kind`` run
    was begun with, when those are all it differs in from ``describe``: such a run continues as it began
    instead of being refused as another run. A field the old run's description lacks (added since) counts as
    its former value. Empty when ``out`` holds no such run."""
    try:
        old = read_json(Path(out) / "run.json", "run file")
    except (OSError, ValueError):
        return {}
    there = old.get("describe", {}) if old.get("kind") == kind else {}
    if not there:
        return {}
    # a field described since (in ``describe``, not in the old run's) had its former value then
    there = {**{f: v for f, v in formers.items() if f in describe and f not in there}, **there}
    begun = {f: v for f, v in formers.items() if f in there and there[f] == v and describe.get(f) != v}
    return begun if begun and {**describe, **begun} == there else {}


_LOCKS: dict[str, object] = {}  # run folder -> the open lock file this process holds


def lock_folder(out: Path) -> None:
    """Hold ``out/.lock`` (an advisory ``flock``) for as long as this process uses the folder, so a second
    process (a repeated command, a ``--fresh`` typed in another terminal) is refused instead of deleting or
    mixing files under a run in progress. The kernel releases it when the process ends, however it ends."""
    key = str(out.resolve())
    if key in _LOCKS:
        return
    f = open(out / ".lock", "a+")  # noqa: SIM115 - held open on purpose until release_locks or exit
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.seek(0)
        pid = f.read().strip()
        f.close()
        raise RunError(f"--out {out} is in use by another running process{f' (pid {pid})' if pid else ''}: wait "
                       "for it to finish, or choose another --out") from None
    f.seek(0)
    f.truncate()
    f.write(f"{os.getpid()}\n")
    f.flush()
    _LOCKS[key] = f


def release_locks(out: Path | None = None) -> None:
    """Let go of run folder ``out`` (default: every one this process holds), so in-process callers can claim
    it again (a command's end, a finished :func:`~truco_lab.lab.match_run.run_match`)."""
    keys = list(_LOCKS) if out is None else [str(Path(out).resolve())]
    for k in keys:
        f = _LOCKS.pop(k, None)
        if f is not None:
            f.close()


def refuse_conflicting(resume: bool, fresh: bool) -> None:
    """``--resume`` with ``--fresh`` would delete the run it was asked to continue: refused before anything
    is touched."""
    if resume and fresh:
        raise RunError("--resume and --fresh contradict each other (continue the run, or delete it and start "
                       "over): give one of them")


def _differences(old, new, prefix: str = "") -> list[str]:
    """The fields that differ, by dotted name (nested dicts are walked, so a rules change names its field)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in sorted(set(old) | set(new)):
            if old.get(k) != new.get(k):
                out += _differences(old.get(k), new.get(k), f"{prefix}{k}.")
        return out
    return [f"{prefix[:-1]} {old!r} there, {new!r} now"]


def _difference(old: dict, new: dict) -> str:
    diffs = _differences(old, new)
    if not diffs:
        return "different options"
    return "; ".join(diffs[:3]) + (f"; {len(diffs) - 3} more" if len(diffs) > 3 else "")


class Progress:
    """A tqdm bar for one solve: iterations, speed, last exploitability, memory, and an ETA
    extrapolated from the exploitability's decay when a target is set."""

    def __init__(self, desc: str, target: float | None = None, total: int | None = None,
                 enabled: bool = True) -> None:
        self.target = target
        self.bar = None
        self.points: list[tuple[int, float]] = []
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="it", desc=desc, leave=True)

    def __call__(self, info: dict) -> None:
        if self.bar is None:
            return
        self.bar.n = info["iteration"]
        e = info.get("exploitability")
        if e is not None:
            self.points.append((info["iteration"], e))
            self.bar.set_postfix(expl=f"{e:.3g}", rss=f"{info['rss_gb']:.2f}GB", refresh=False)
            if self.target is not None and len(self.points) >= 2:
                self.bar.total = self._eta_total()
        self.bar.refresh()

    def _eta_total(self) -> int | None:
        """Iterations to the target if exploitability keeps decaying like a power of T."""
        (t1, e1), (t2, e2) = self.points[-2], self.points[-1]
        if e2 <= self.target:
            return t2
        if not (e1 > e2 > 0 and t2 > t1 > 0):
            return None
        k = math.log(e1 / e2) / math.log(t2 / t1)
        return int(t2 * (e2 / self.target) ** (1 / k)) + 1 if k > 0 else None

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
