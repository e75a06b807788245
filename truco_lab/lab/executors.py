"""Executors run cell jobs: in this process, in a local process pool, or on a Ray cluster.

Every executor calls the same :func:`truco_lab.lab.cell.run_cell`; results come
back to the driver (which alone writes summaries) and, with a workdir, each job
also leaves its own files (checkpoint, table, result) named by its spec hash,
so a crashed worker loses at most one checkpoint interval and a re-run reuses
finished jobs. Results are identical whichever executor runs them: warm starts
come from the plan (a named neighbour checkpoint), never from scheduling.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import sys
from collections.abc import Callable

from truco_lab.lab.cell import CellError, CellJob, CellResult, TreeCache, run_cell

OnResult = Callable[[CellJob, CellResult], None]
EXECUTORS = ("local", "ray")


class InlineExecutor:
    """Runs jobs one after another in this process (tests, one worker)."""

    def __init__(self, cache_gb: float = 6.0) -> None:
        self.cache = TreeCache(cache_gb, keep_last=False)

    def map(self, jobs: list[CellJob], on_result: OnResult) -> None:
        for job in jobs:
            on_result(job, run_cell(job, cache=self.cache))

    def close(self) -> None:
        self.cache.trees.clear()


def grouped_by_structure(jobs: list[CellJob]) -> list[int]:
    """The jobs' indices with those of one structure key together, in order of each key's first job (and in their
    own order within a key): a worker then needs a kept tree only for the jobs right after it (see
    :func:`truco_lab.lab.cell.run_cell`, which drops the others). One level's jobs do not depend on each other."""
    first: dict[str, int] = {}
    keys = [first.setdefault(j.spec.structure_key(), i) for i, j in enumerate(jobs)]
    return sorted(range(len(jobs)), key=lambda i: (keys[i], i))


def _worker(inbox, outbox, cache_gb: float) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver decides; SIGTERM still saves (run() defers it)
    cache = TreeCache(cache_gb, keep_last=False)
    while True:
        item = inbox.get()
        if item is None:
            return
        idx, job = item
        try:
            outbox.put((idx, "ok", run_cell(job, cache=cache).to_dict()))
        except KeyboardInterrupt:
            outbox.put((idx, "interrupted", f"{job.spec.name} stopped; checkpoint saved"))
            return
        except Exception as e:  # noqa: BLE001 - reported to the driver as one line
            outbox.put((idx, "error", f"{job.spec.name}: {type(e).__name__}: {e}"))


class LocalExecutor:
    """A pool of worker processes (default 2). Jobs with the same structure key go to the same
    worker, which keeps the built tree (and its labels) between them."""

    def __init__(self, workers: int = 2, cache_gb: float | None = None) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        # fork where there is one: workers start at once and a user's script needs no
        # ``if __name__ == "__main__"`` guard (spawn re-imports the caller's main module)
        ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        self.workers = workers
        gb = cache_gb if cache_gb is not None else max(1.0, 16.0 / workers)
        self.outbox = ctx.Queue()
        self.inboxes = [ctx.Queue() for _ in range(workers)]
        self.procs = [ctx.Process(target=_worker, args=(q, self.outbox, gb), daemon=True) for q in self.inboxes]
        for p in self.procs:
            p.start()
        self.affinity: dict[str, int] = {}
        self.load = [0] * workers

    def _assign(self, job: CellJob) -> int:
        k = job.spec.structure_key()
        if k not in self.affinity:
            self.affinity[k] = min(range(self.workers), key=lambda w: self.load[w])
        w = self.affinity[k]
        self.load[w] += 1
        return w

    def map(self, jobs: list[CellJob], on_result: OnResult) -> None:
        self.load = [0] * self.workers
        for i in grouped_by_structure(jobs):
            self.inboxes[self._assign(jobs[i])].put((i, jobs[i]))
        left = len(jobs)
        while left:
            try:
                idx, status, payload = self.outbox.get(timeout=5.0)
            except queue.Empty:
                dead = [p for p in self.procs if not p.is_alive()]
                if dead:
                    raise CellError(f"a worker process died (exit code {dead[0].exitcode}; out of memory?); "
                                    "finished jobs are kept: run again with --resume") from None
                continue
            if status != "ok":
                raise CellError(payload)
            left -= 1
            on_result(jobs[idx], CellResult.from_dict(payload))

    def close(self) -> None:
        for q in self.inboxes:
            q.put(None)
        for p in self.procs:
            p.join(timeout=2)
        busy = sum(p.is_alive() for p in self.procs)
        if busy:  # after Ctrl-C a worker saves first, and one building a tree holds signals until it is built
            print(f"waiting for {busy} worker{'s' * (busy > 1)} to stop (each saves its checkpoint first, and a tree "
                  "being built is finished first: up to a minute or two on the big cells)", file=sys.stderr, flush=True)
        for p in self.procs:
            p.join(timeout=30)
            if p.is_alive():
                p.terminate()
                p.join(timeout=30)
        # after an interrupt the inboxes may hold a level's jobs no worker will read: at exit each queue's feeder
        # thread would wait to push them into a full pipe whose reader is gone, and the process hung after saying
        # "interrupted" (seen on a real min:6 run); they are dropped instead
        for q in (*self.inboxes, self.outbox):
            q.cancel_join_thread()


def _ray_run(job: CellJob) -> dict:
    return run_cell(job).to_dict()


class RayExecutor:
    """One Ray task per (cell, vira class), declaring its memory so Ray packs tasks by memory.

    ``address`` ``None`` starts a local Ray with ``workers`` CPUs; otherwise it joins a
    cluster (``ray start --head`` on one machine, ``ray start --address ...`` on the
    others). ``--out`` must then be a path every node sees (a shared file system).
    """

    def __init__(self, address: str | None = None, workers: int = 2, memory_gb: Callable[[CellJob], float] | None = None
                 ) -> None:
        try:
            import ray
        except ImportError:
            raise CellError("--executor ray needs Ray: pip install 'truco-lab[ray]'") from None
        self.ray = ray
        if not ray.is_initialized():
            if address:
                ray.init(address=address, log_to_driver=False)
            else:
                ray.init(num_cpus=workers, log_to_driver=False, include_dashboard=False)
        self.remote = ray.remote(num_cpus=1)(_ray_run)
        self.memory_gb = memory_gb or (lambda job: 1.0)

    def map(self, jobs: list[CellJob], on_result: OnResult) -> None:
        ray = self.ray
        pending = {}
        for job in jobs:
            mem = int(self.memory_gb(job) * 2**30)
            ref = self.remote.options(memory=mem, num_cpus=job.threads, max_retries=2).remote(job)
            pending[ref] = job
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                job = pending.pop(ref)
                try:
                    res = ray.get(ref)
                except Exception as e:  # noqa: BLE001
                    raise CellError(f"{job.spec.name}: Ray task failed: {str(e).splitlines()[0]}") from None
                on_result(job, CellResult.from_dict(res))

    def close(self) -> None:
        pass


def make_executor(kind: str, workers: int = 2, address: str | None = None, memory_gb=None,
                  cache_gb: float | None = None):
    """``local`` (a process pool; 1 worker runs inline; ``cache_gb`` of built trees kept per worker) or ``ray``."""
    if kind == "local":
        if workers == 1:
            return InlineExecutor() if cache_gb is None else InlineExecutor(cache_gb)
        return LocalExecutor(workers, cache_gb)
    if kind == "ray":
        return RayExecutor(address, workers, memory_gb)
    raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, got {kind!r}")


def cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
