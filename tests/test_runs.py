"""Runs survive what users do to them: re-runs, resumes into the wrong folder, corrupt files, signals."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from solvers.tables import StrategyTable
from truco_lab.cli import main

SMALL = ["--ranks", "7QJKA23", "--suits", "c", "--max-stake", "3"]
ROOT = Path(__file__).resolve().parents[1]


def solve_args(out, *extra, score="3,5", algorithm="dcfr"):
    return ["solve", "--score", score, "--dealer", "0", "--vira", "all", "--algorithm", algorithm, *SMALL,
            "--out", str(out), "-q", *extra]


def one_error_line(capsys, code_expected, argv, *named):
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's own errors
        code = e.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == code_expected, err
    assert len(err) == 1, err
    for n in named:
        assert n in err[0], err
    return err[0]


def test_rerunning_a_finished_run_reports_it_again(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(solve_args(out, "--target-exploitability", "1e-3")) == 0
    first = json.loads((out / "summary.json").read_text())
    assert first["target_met"] and first["target"] == 1e-3
    assert all(c["history"] and len(c["history"][0]) == 3 for c in first["cells"])  # iteration, expl, seconds
    assert main(solve_args(out, "--target-exploitability", "1e-3", "--resume")) == 0  # no KeyError, no crash
    again = json.loads((out / "summary.json").read_text())
    assert all(c["reused"] for c in again["cells"])
    assert again["game_value"] == first["game_value"]
    # the same command without --resume refuses instead of silently replacing part of the run
    one_error_line(capsys, 2, solve_args(out, "--target-exploitability", "1e-3"), "--resume", str(out))
    assert len(StrategyTable.load(out).df) == sum(c["rows"] for c in first["cells"])


def test_another_run_in_the_folder_is_refused_unless_fresh(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(solve_args(out, "--iterations", "5")) == 0
    before = sorted(p.name for p in out.rglob("*"))
    one_error_line(capsys, 2, solve_args(out, "--iterations", "5", "--resume", score="4,5"), "another run", "score")
    one_error_line(capsys, 2, solve_args(out, "--iterations", "5", "--resume", algorithm="cfr+"), "algorithm")
    one_error_line(capsys, 2, [*solve_args(out, "--iterations", "5", "--resume"), "--prunes", "none"], "prunes")
    assert sorted(p.name for p in out.rglob("*")) == before  # files left as they were
    assert main(solve_args(out, "--iterations", "5", "--fresh", score="4,5")) == 0
    t = StrategyTable.load(out)
    assert set(t.df["score0"].unique()) == {4}  # nothing stale mixed in


def test_fresh_clears_what_an_interrupted_run_leaves(tmp_path):
    """A streamed solve's parts and a match's tree store are the tool's own folders: ``--fresh`` removes them with
    the rest (before, a folder holding them was refused as another tool's)."""
    from truco_lab.lab.runs import claim, release_locks

    out = tmp_path / "r"
    claim(out, "match", "k1", {"a": 1}, resume=False, fresh=False)
    for d in ("parts/s0-0_d1_v0.abc", "trees/0123456789abcdef"):
        (out / d).mkdir(parents=True)
        (out / d / "x.npy").write_bytes(b"0")
    release_locks(out)
    claim(out, "match", "k2", {"a": 2}, resume=False, fresh=True)
    release_locks(out)
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["run.json"]


def test_unwritable_out_fails_before_solving(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    t = time.perf_counter()
    one_error_line(capsys, 2, solve_args(blocker / "sub", "--iterations", "100000"), "--out")
    assert time.perf_counter() - t < 10


@pytest.mark.parametrize("damage", ["truncate", "empty", "random"])
def test_damaged_checkpoint_gets_one_line_and_is_left_alone(tmp_path, capsys, damage):
    out = tmp_path / "r"
    assert main(solve_args(out, "--iterations", "10", "--checkpoint-every", "5")) == 0
    ck = sorted((out / "checkpoints").glob("*.npz"))[0]
    data = ck.read_bytes()
    bad = {"truncate": data[: len(data) // 2], "empty": b"", "random": np.random.default_rng(0).bytes(4000)}[damage]
    ck.write_bytes(bad)
    for r in (out / "results").glob("*.json"):
        r.unlink()  # force the cell to be continued from its checkpoint
    one_error_line(capsys, 2, solve_args(out, "--iterations", "20", "--resume"), ck.name)
    assert ck.read_bytes() == bad


def test_corrupt_result_and_summary_files(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(solve_args(out, "--iterations", "5")) == 0
    res = sorted((out / "results").glob("*.json"))[0]
    res.write_text("{not json")
    one_error_line(capsys, 2, solve_args(out, "--iterations", "5", "--resume"), res.name)
    res.unlink()
    (out / "summary.json").write_text("garbage")  # an output only: a resume rewrites it
    assert main(solve_args(out, "--iterations", "5", "--resume")) == 0
    assert json.loads((out / "summary.json").read_text())["iterations"] == 5
    (out / "run.json").write_text("")
    one_error_line(capsys, 2, solve_args(out, "--iterations", "5", "--resume"), "run.json")


def test_missed_target_is_recorded_warned_and_nonzero(tmp_path, capsys):
    out = tmp_path / "r"
    code = main(solve_args(out, "--target-exploitability", "1e-9", "--max-iterations", "10"))
    assert code == 3
    err = capsys.readouterr().err
    assert "not reached" in err
    s = json.loads((out / "summary.json").read_text())
    assert s["target"] == 1e-9 and s["target_met"] is False
    assert all(c["iterations"] == 10 for c in s["cells"])


def test_table_options(tmp_path):
    out = tmp_path / "r"
    assert main(solve_args(out, "--iterations", "30", "--table-min-reach", "0.01")) == 0
    s = json.loads((out / "summary.json").read_text())
    assert all(c["rows_dropped"] > 0 for c in s["cells"])
    t = StrategyTable.load(out)
    assert (t.df["reach"] >= 0.01).all()
    assert "columns" in t.metadata and "action_value" in t.metadata["columns"]
    out2 = tmp_path / "n"
    assert main(solve_args(out2, "--iterations", "5", "--no-table")) == 0
    assert not list(out2.glob("*.parquet"))


MID = ["solve", "--score", "0,0", "--dealer", "1", "--vira", "Qc", "--ranks", "QJKA23", "--suits", "cd",
       "--max-stake", "6", "-q", "--checkpoint-every", "10", "--iterations", "150"]
CLI = [sys.executable, "-m", "truco_lab.cli"]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    ref = tmp_path_factory.mktemp("ref")
    assert subprocess.run([*CLI, *MID, "--out", str(ref)], cwd=ROOT).returncode == 0
    return next((ref / "checkpoints").glob("*.npz"))


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_saves_whole_iterations_and_resume_is_bit_identical(tmp_path, sig, uninterrupted):
    run = tmp_path / "run"
    p = subprocess.Popen([*CLI, *MID, "--out", str(run)], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not list((run / "checkpoints").glob("*.npz")) and time.time() < deadline:
        time.sleep(0.2)  # iterating once the first checkpoint is there
    p.send_signal(sig)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    assert "--resume" in err and len(err.strip().splitlines()) == 1
    ck = next((run / "checkpoints").glob("*.npz"))
    with np.load(ck) as d:
        stopped = int(d["iteration"])
    assert 10 <= stopped < 150
    assert subprocess.run([*CLI, *MID, "--out", str(run), "--resume"], cwd=ROOT).returncode == 0
    with np.load(uninterrupted) as a, np.load(ck) as b:
        assert int(a["iteration"]) == int(b["iteration"]) == 150
        assert np.array_equal(a["regrets"], b["regrets"]) and np.array_equal(a["ssum"], b["ssum"])


def test_sigterm_before_solving_exits_like_ctrl_c(tmp_path):
    out = tmp_path / "x"
    p = subprocess.Popen([*CLI, *MID, "--out", str(out)], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not out.exists() and time.time() < deadline:  # the run folder is claimed: past the imports (a fixed
        time.sleep(0.05)  # sleep was not enough on a loaded machine), before or during the build
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=600)  # on a cold numba cache the compile in progress finishes first
    assert p.returncode == 130, err


def test_match_cli_plan_and_bad_arguments(tmp_path, capsys):
    out = tmp_path / "m"
    assert main(["match", "--out", str(out), "--plan", "--cells", "all"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    # totals, store, disk, this machine, threads, path
    assert "CPU-hours" in lines[1 + 144] and len(lines) <= 1 + 144 + 6
    assert lines[2 + 144].startswith("tree store: ") and " read them" in lines[2 + 144]
    assert lines[3 + 144].startswith("disk in DIR: ~") and " GB of tables, checkpoints up to ~" in lines[3 + 144]
    assert lines[-1].startswith("critical path:") and "0x0 d1" in lines[-1]  # the chain starts at the match's start
    assert any("1-3-6-9-12" in x for x in lines) and any(" 3 " in x and "11x" in x for x in lines)
    assert not out.exists()  # --plan solves and writes nothing
    one_error_line(capsys, 2, ["match", "--out", str(out), "--cells", "12,0"], "--cells")
    one_error_line(capsys, 2, ["match", "--out", str(out), "--cells", "eleven", "3,4"], "--cells")
    assert main(["match", "--out", str(out), "--plan", "--cells", "10,10", "9,11"]) == 0
    plan = capsys.readouterr().out.strip().splitlines()
    assert plan[1 + 6].startswith("6 cells")  # 10x10 d1, 10x11 d0/d1, 9x11 d0/d1, 11x11 d1: successors come along
    # the wall time here, or (while other work holds the memory) why there is none: a line either way
    assert any(x.startswith("on this machine:") and (" h wall with " in x or "does not fit" in x) for x in plan)
    one_error_line(capsys, 2, ["match", "--out", str(out), "--workers", "0"], "--workers")
    one_error_line(capsys, 2, ["match", "--out", str(out), "--tree-store-gb", "-1"], "--tree-store-gb")
    one_error_line(capsys, 2, ["match", "--out", str(out), "--executor", "spark"], "--executor")
    one_error_line(capsys, 2, ["match", "--out", str(out), "--ranks", "7Z"], "ranks")


def test_match_cli_runs_resumes_and_writes_its_outputs(tmp_path, capsys):
    out = tmp_path / "m"
    argv = ["match", "--out", str(out), "--cells", "8,11", "--workers", "1", "-q", *SMALL,
            "--target-exploitability", "1e-3"]  # 8x11 and its successors: 7 cells
    assert main(argv) == 0
    import pandas as pd

    eq = pd.read_parquet(out / "equity.parquet")
    assert list(eq.columns) == ["score0", "score1", "dealer", "equity", "exploitability", "iterations", "seconds",
                                "peak_memory_gb"]
    assert len(eq) == 14 and ((eq["equity"] >= 0) & (eq["equity"] <= 1)).all()  # the 7 and their mirrors
    assert (out / "equity.png").read_bytes()[:4] == b"\x89PNG"
    s = json.loads((out / "summary.json").read_text())
    assert s["match_exploitability"] >= 0 and s["cells_solved"] == 7
    tables = StrategyTable.load(out / "cells" / "s10-11_d0")
    assert set(tables.df["score0"].unique()) == {10}
    assert "match exploitability" in capsys.readouterr().out
    one_error_line(capsys, 2, argv, "--resume")
    assert main([*argv, "--resume"]) == 0
    again = json.loads((out / "summary.json").read_text())
    assert again["match_exploitability"] == s["match_exploitability"]
    # the plan of a run folder sets what its finished tasks cost beside what it predicted
    capsys.readouterr()
    assert main(["match", "--out", str(out), "--cells", "8,11", "--plan", *SMALL]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[-2:] == ["measured", "peak"]
    ntasks = sum(len(list((out / "cells" / c.name / "results").glob("*.json"))) for c in (out / "cells").iterdir())
    said = [x for x in lines if x.startswith(f"measured in {out}: {ntasks} finished tasks of 7 cells took ")]
    assert len(said) == 1 and "x the " in said[0]
    assert f"left in {out}: nothing, every task is finished" in lines
    # finished cells keep their tables, not their checkpoints (nothing later starts from them)
    assert not list(out.glob("cells/*/checkpoints/*.npz")) and list(out.glob("cells/*/*.parquet"))
    disk = [x for x in lines if x.startswith("disk in DIR, for what is left: ~0.0 GB of tables, checkpoints up to ")]
    assert len(disk) == 1 and disk[0].endswith(" GB free there now")
    from truco_lab.lab.match_run import _left_line

    part = _left_line(out, 207, 5.0, 10.0, 1.5, 6.0)  # half the plan's CPU-hours left of a 6-hour run here
    assert part == f"left in {out}: 207 tasks, 5.00 of the plan's 10.00 CPU-hours; ~3.0 h wall here by the plan, " \
                   "~4.5 h at the 1.50x its finished tasks ran"
    one = json.loads(next((out / "cells").glob("*/results/*.json")).read_text())
    assert one["threads"] == 1 and one["br_seconds"] > 0


def test_match_warns_at_the_start_when_the_disk_may_not_hold_what_is_left(tmp_path, capsys, monkeypatch):
    import truco_lab.lab.match as M

    monkeypatch.setattr(M, "free_disk_gb", lambda out: 0.0)
    out = tmp_path / "m"
    assert main(["match", "--out", str(out), "--cells", "11,11", "--workers", "1", "-q", *SMALL]) == 0
    err = [x for x in capsys.readouterr().err.splitlines() if "warning: what is left may need ~" in x]
    assert len(err) == 1 and err[0].startswith("truco-lab match: warning:") and "0.0 GB are free" in err[0]
    assert main(["match", "--out", str(out), "--cells", "11,11", "--workers", "1", "-q", "--resume", *SMALL]) == 0
    assert "warning: what is left" not in capsys.readouterr().err  # nothing is left


def test_solve_in_match_equity_from_a_match_run(tmp_path, capsys):
    m = tmp_path / "m"
    assert main(["match", "--out", str(m), "--cells", "eleven", "--workers", "1", "-q", "--no-table", *SMALL]) == 0
    out = tmp_path / "s"
    argv = ["solve", "--score", "10,10", "--dealer", "1", "--vira", "all", *SMALL, "--out", str(out), "-q",
            "--payoff", "equity", "--equity", str(m / "equity.parquet"), "--target-exploitability", "1e-4"]
    assert main(argv) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["payoff"] == "equity" and s["units"].startswith("match-win probability")
    assert 0 < s["game_value"] < 1
    # a cell whose successors the equity table lacks: one line naming the missing cell
    base = ["solve", "--dealer", "1", "--vira", "all", *SMALL, "-q", "--iterations", "3"]
    one_error_line(capsys, 2, [*base, "--score", "3,3", "--out", str(tmp_path / "t"), "--payoff", "equity",
                               "--equity", str(m / "equity.parquet")], "not known")
    one_error_line(capsys, 2, [*base, "--score", "10,10", "--out", str(tmp_path / "u"), "--payoff", "equity"],
                   "--equity")


def test_a_signal_that_arrives_inside_a_finalizer_still_interrupts():
    """CI lost a SIGTERM that arrived while llvmlite ran a ``__del__`` (Python drops exceptions raised there) and
    the run finished with exit code 0: the handler now delivers it again once the finalizer has returned."""
    import os

    from truco_lab.cli.common import sigterm_as_interrupt

    class Finalized:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.01)  # the handler runs here, inside __del__

    before = signal.getsignal(signal.SIGTERM)
    reached = []
    with pytest.raises(KeyboardInterrupt):
        with sigterm_as_interrupt():
            Finalized()  # collected at once: the signal arrives inside its finalizer
            reached.append(True)
            time.sleep(2)  # the second delivery lands here
            reached.append(False)
    assert reached == [True]
    assert signal.getsignal(signal.SIGTERM) is before  # restored after the block


def test_a_signal_that_arrives_inside_a_weakref_callback_still_interrupts():
    """Python drops an exception raised inside a weakref callback too (multiprocessing's and numba's finalizers
    are such callbacks, and no ``__del__`` frame shows it): a SIGTERM to an Argentine match driver was lost that
    way once and the run went on. The dropped interrupt is sent again; the unraisable hook is restored."""
    import os
    import sys
    import weakref

    from truco_lab.cli.common import sigterm_as_interrupt

    class Owner:
        pass

    def callback():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.01)  # the handler runs here, inside the callback

    hook = sys.unraisablehook
    reached = []
    with pytest.raises(KeyboardInterrupt):
        with sigterm_as_interrupt():
            owner = Owner()
            weakref.finalize(owner, callback)
            del owner  # the callback runs at once: the signal arrives inside it
            reached.append(True)
            time.sleep(2)  # the second delivery lands here
            reached.append(False)
    assert reached == [True]
    assert sys.unraisablehook is hook


@pytest.fixture
def ctrl_c():
    """Python's own Ctrl-C handler for the test, whatever the suite inherited: a suite started in the background
    by a shell without job control (``cmd &``) starts with SIGINT ignored, and then a deferred or re-sent Ctrl-C
    correctly goes to that ignoring handler. Restored afterwards."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_signals_inside_deferred_signals_reach_their_handler_after_the_block(ctrl_c):
    """What keeps a signal from crashing numba's boxing of a tree build's arrays: inside the block the signal is
    only noted; the previous handler (here Ctrl-C's) runs once the block ends, exactly once."""
    import os

    from solvers.signals import deferred_signals

    ran_inside = []
    with pytest.raises(KeyboardInterrupt):
        with deferred_signals():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)  # let Python run its handlers: the deferring one notes the signal
            ran_inside.append(True)  # reached: nothing was raised inside
    assert ran_inside == [True]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored
    with deferred_signals():
        pass  # no signal: nothing raised afterwards


def test_a_run_folder_in_use_by_another_process_is_refused_even_with_fresh(tmp_path, capsys):
    """A second command on a folder whose run is still going (here --fresh, which would delete it) is refused
    before anything is touched; once the first process is gone the folder is free again."""
    out = tmp_path / "run"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; from truco_lab.lab.runs import claim; "
         f"claim(Path({str(out)!r}), 'solve', 'k', {{}}, resume=False, fresh=False); print('held', flush=True); "
         "sys.stdin.read()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert holder.stdout.readline().strip() == "held"
        before = sorted(p.name for p in out.iterdir())
        code = main([*MID[:-2], "--iterations", "2", "--out", str(out), "--fresh"])
        err = capsys.readouterr().err
        assert code == 2 and "in use by another running process" in err and f"pid {holder.pid}" in err
        assert sorted(p.name for p in out.iterdir()) == before  # nothing deleted
    finally:
        holder.communicate("")
    assert main([*MID[:-2], "--iterations", "2", "--out", str(out), "--fresh"]) == 0


def test_a_second_ctrl_c_stops_mid_iteration_and_keeps_the_last_whole_checkpoint(tmp_path, ctrl_c):
    """One Ctrl-C waits for the iteration to end (minutes on a big cell) and saves it; a second one stops at once,
    leaving the checkpoint of the last whole iteration untouched."""
    import os

    import pyspiel

    from solvers import CFRSolver, build_openspiel_tree
    from solvers.api import run

    class Interrupted(CFRSolver):
        signals = 2
        fired = False

        def iterate(self, n: int = 1) -> None:
            super().iterate(n)
            if self.iteration > 5 and not self.fired:  # inside the chunk after the checkpoint at 5
                self.fired = True
                for _ in range(self.signals):
                    os.kill(os.getpid(), signal.SIGINT)
                    time.sleep(0.01)

    ck = tmp_path / "ck.npz"
    kuhn = build_openspiel_tree(pyspiel.load_game("kuhn_poker"))
    with pytest.raises(KeyboardInterrupt, match="twice"):
        run(Interrupted(kuhn, "dcfr"), 20, checkpoint=ck, checkpoint_every=5)
    with np.load(ck) as d:
        assert int(d["iteration"]) == 5  # the last whole checkpoint, not the interrupted chunk's
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored

    once = Interrupted(kuhn, "dcfr")
    once.signals = 1
    with pytest.raises(KeyboardInterrupt, match="checkpoint saved at iteration 10"):
        run(once, 20, checkpoint=ck, checkpoint_every=5)
    with np.load(ck) as d:
        assert int(d["iteration"]) == 10  # one signal: the chunk ends and is saved


def test_a_killed_writers_temporary_is_removed_by_the_next_write(tmp_path):
    """SIGKILL leaves an atomic write's temporary behind (a table's can be gigabytes); the next write of
    that file removes it, but never a running writer's, nor one another host wrote on shared storage."""
    from solvers.storage import _HOST, write_json

    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    target = tmp_path / "summary.json"
    stale = tmp_path / f".summary.json.{_HOST}.{dead.pid}.tmp"
    live = tmp_path / f".summary.json.{_HOST}.{victim.pid}.tmp"
    other = tmp_path / f".summary.json.otherhost.{dead.pid}.tmp"
    unrelated = tmp_path / f".summary.json.bak.{_HOST}.{dead.pid}.tmp"
    for f in (stale, live, other, unrelated):
        f.write_text("partial")
    try:
        write_json(target, {"a": 1})
    finally:
        victim.kill()
        victim.wait()
    assert json.loads(target.read_text()) == {"a": 1}
    assert not stale.exists() and live.exists() and other.exists() and unrelated.exists()


def _begun_with_dcfr(out: Path, kind: str, describe: dict, key: str) -> None:
    """A run folder as an older version left it: begun with DCFR, the default then."""
    out.mkdir(parents=True)
    (out / "run.json").write_text(json.dumps({"kind": kind, "key": key, "describe": describe}))


def test_a_run_begun_under_the_old_default_continues_with_it(tmp_path, capsys):
    """auto picks DCFR+ for the real deck's 4x4 (ladder 1-3-6-9); a folder begun when DCFR was every cell's
    default is the same run for it (it says so and continues with DCFR), never "another run"."""
    from solvers.storage import stable_hash
    from truco_lab.abstraction.tree import ALL_PRUNES, CAP_OWN_RAISES
    from truco_lab.lab.match import MatchConfig
    from truco_lab.rules.ruleset import PAULISTA

    out = tmp_path / "m"
    describe = {"kind": "match", "rules": PAULISTA.to_dict(), "prunes": ALL_PRUNES, "algorithm": "dcfr"}
    _begun_with_dcfr(out, "match", describe, MatchConfig(PAULISTA, algorithm="dcfr").key())
    match = ["match", "--cells", "11,11", "--out", str(out), "-q"]
    assert main(match) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "begun with DCFR on every cell" in err and "holds this run already" in err
    assert json.loads((out / "run.json").read_text())["describe"]["algorithm"] == "dcfr"  # untouched
    # an explicit other choice is another run, as before
    one_error_line(capsys, 2, [*match, "--algorithm", "dcfr+"], "another run", "algorithm 'dcfr' there")

    solve = ["solve", "--score", "4,4", "--dealer", "1", "--vira", "7d", "--iterations", "1", "--out",
             str(tmp_path / "s"), "--ignore-memory-check", "--no-table", "--split-depth", "0", "-q"]
    # 4x4 is not lopsided, so its prunes are keyed as they were before cap_own_raises
    describe = {"rules": PAULISTA.to_dict(), "score": [4, 4], "dealer": 1, "prunes": ALL_PRUNES & ~CAP_OWN_RAISES,
                "payoff": "points",
                "algorithm": "dcfr", "equity": None}
    _begun_with_dcfr(tmp_path / "s", "solve", describe, stable_hash(describe))
    assert main(solve) == 2
    err = capsys.readouterr().err
    assert "was begun with DCFR" in err and "holds this run already" in err
    one_error_line(capsys, 2, [*solve, "--algorithm", "dcfr+"], "another run", "algorithm 'dcfr' there, 'dcfr+' now")


def test_a_run_begun_before_the_leaders_raises_were_capped_continues_on_its_trees(tmp_path, capsys):
    """cap_own_raises (stop 44) changes the trees of lopsided cells, so the keys of runs that solve them: a folder
    begun before it (prunes without it, and DCFR, the default then) is the same run and continues so."""
    from solvers.storage import stable_hash
    from truco_lab.abstraction.tree import ALL_PRUNES, CAP_OWN_RAISES
    from truco_lab.lab.match import MatchConfig
    from truco_lab.rules.ruleset import PAULISTA

    before = ALL_PRUNES & ~CAP_OWN_RAISES
    out = tmp_path / "m"
    describe = {"kind": "match", "rules": PAULISTA.to_dict(), "prunes": before, "algorithm": "dcfr"}
    _begun_with_dcfr(out, "match", describe, MatchConfig(PAULISTA, prunes=before, algorithm="dcfr").key())
    match = ["match", "--cells", "11,11", "--out", str(out), "-q"]
    assert main(match) == 2
    err = capsys.readouterr().err
    assert "begun with DCFR on every cell" in err and "before the leading player's raises were capped" in err
    assert "holds this run already" in err
    assert json.loads((out / "run.json").read_text())["describe"]["prunes"] == before  # untouched

    # a lopsided cell's solve: the prune bites there, so the old run is recognised by its prunes
    s = tmp_path / "s"
    solve = ["solve", "--score", "0,9", "--dealer", "1", "--vira", "7d", "--iterations", "1", "--out", str(s),
             "--ignore-memory-check", "--no-table", "--split-depth", "0", "-q", "--algorithm", "dcfr"]
    describe = {"rules": PAULISTA.to_dict(), "score": [0, 9], "dealer": 1, "prunes": before, "payoff": "points",
                "algorithm": "dcfr", "equity": None}
    _begun_with_dcfr(s, "solve", describe, stable_hash(describe))
    assert main(solve) == 2
    err = capsys.readouterr().err
    assert "before the leading player's raises were capped" in err and "holds this run already" in err
    # the same command on a fresh folder is keyed with the prune (another run than the old folder's)
    fresh = {**describe, "prunes": ALL_PRUNES}
    assert stable_hash(fresh) != stable_hash(describe)


def test_a_run_begun_when_auto_started_at_four_rungs_continues_so(tmp_path, capsys):
    """Stop 45 moved auto's DCFR+ down to the 1-3-6 cells: a real-deck match folder begun before (its description
    has no threshold) is the same run, continues with DCFR on those cells."""
    from truco_lab.abstraction.tree import ALL_PRUNES
    from truco_lab.lab.match import AUTO_OLD_RUNGS, MatchConfig
    from truco_lab.rules.ruleset import PAULISTA

    out = tmp_path / "m"
    describe = {"kind": "match", "rules": PAULISTA.to_dict(), "prunes": ALL_PRUNES, "algorithm": "auto"}
    _begun_with_dcfr(out, "match", describe, MatchConfig(PAULISTA, auto_rungs=AUTO_OLD_RUNGS).key())
    match = ["match", "--cells", "11,11", "--out", str(out), "-q"]
    assert main(match) == 2
    err = capsys.readouterr().err
    assert "cells of four rungs or more" in err and "holds this run already" in err
    assert "auto_rungs" not in json.loads((out / "run.json").read_text())["describe"]  # untouched
    assert MatchConfig(PAULISTA, auto_rungs=4).cell_algorithm((7, 7, 1)) == "dcfr"
    assert MatchConfig(PAULISTA).cell_algorithm((7, 7, 1)) == "dcfr+"


def test_auto_chooses_dcfr_plus_from_three_rungs_on_the_real_deck_only():
    from truco_lab.lab.match import AUTO, MatchConfig, cell_algorithm, live_ladder, plan
    from truco_lab.rules.ruleset import PAULISTA

    small = PAULISTA.with_deck("4567QJKA23", "c")
    chosen = {c: cell_algorithm(AUTO, PAULISTA, live_ladder(PAULISTA, c)) for c in [(0, 0, 1), (4, 4, 1), (7, 7, 1),
                                                                                      (10, 10, 0), (11, 11, 1)]}
    assert chosen == {(0, 0, 1): "dcfr+", (4, 4, 1): "dcfr+", (7, 7, 1): "dcfr+", (10, 10, 0): "dcfr",
                      (11, 11, 1): "dcfr"}
    assert cell_algorithm(AUTO, PAULISTA, live_ladder(PAULISTA, (6, 9, 1))) == "dcfr+"  # the capped 1-3-6 shape
    assert cell_algorithm(AUTO, small, live_ladder(small, (0, 0, 1))) == "dcfr"  # no evidence on small decks
    assert cell_algorithm("cfr+", PAULISTA, live_ladder(PAULISTA, (0, 0, 1))) == "cfr+"
    # the plan prices DCFR+'s fewer iterations where auto uses it, and nothing else changes
    cells = [(0, 0, 1), (4, 4, 1), (10, 10, 0)]
    auto, dcfr = plan(PAULISTA, cells), plan(PAULISTA, cells, algorithm="dcfr")
    for a, d in zip(auto[:2], dcfr[:2], strict=True):  # 0.88 of the iterations; the build and table write unchanged
        assert 0.88 * d.hours < a.hours < 0.95 * d.hours
    assert auto[2].hours == dcfr[2].hours and [r.peak_gb for r in auto] == [r.peak_gb for r in dcfr]
    assert MatchConfig(small).key() == MatchConfig(small, algorithm="dcfr").key()


def test_solve_warm_from_a_solved_checkpoint(tmp_path, capsys):
    """``--warm-from`` starts a cell from a solved cell's regrets (as the match solver does), records it, and
    refuses what cannot start the run in one line."""
    one = ["--dealer", "0", "--vira", "Ac", *SMALL, "-q", "--algorithm", "dcfr"]
    assert main(["solve", "--score", "3,5", *one, "--iterations", "60", "--no-table", "--out", str(tmp_path / "a")]) == 0
    (ck,) = (tmp_path / "a" / "checkpoints").glob("*.npz")
    runs = {}
    for name, extra in (("cold", []), ("warm", ["--warm-from", str(ck)])):
        argv = ["solve", "--score", "3,5", *one, "--iterations", "1", "--no-table", "--out", str(tmp_path / name)]
        assert main([*argv, *extra]) == 0
        runs[name] = json.loads((tmp_path / name / "summary.json").read_text())
    warm, cold = runs["warm"]["cells"][0], runs["cold"]["cells"][0]
    assert (warm["warm_start"], warm["warm_iterations"]) == (ck.name, 60)
    assert (cold["warm_start"], cold["warm_iterations"]) == (None, 0)
    assert warm["iterations"] == 1  # the count starts afresh: the neighbour's average is not carried over
    # the solved regrets' strategy is far nearer equilibrium than a first cold iterate
    assert warm["exploitability"] < 0.5 * cold["exploitability"], (warm["exploitability"], cold["exploitability"])
    base = ["solve", *one, "--iterations", "1", "--out", str(tmp_path / "x")]
    several = ["solve", "--score", "3,5", "--dealer", "0", "--vira", "all", "--ranks", "QJKA23", "--suits", "cd",
               "--iterations", "1", "--out", str(tmp_path / "y"), "--warm-from", str(ck)]
    one_error_line(capsys, 2, several, "--warm-from", "--vira")
    one_error_line(capsys, 2, [*base, "--score", "3,5", "--warm-from", str(tmp_path / "nope.npz")],
                   "--warm-from", "nope.npz")
    one_error_line(capsys, 2, [*base, "--score", "5,11", "--warm-from", str(ck), "--fresh"], "warm start", ck.name)


def test_an_interrupted_match_serves_the_levels_it_finished(tmp_path, monkeypatch, capsys):
    """A match writes its outputs after every score-sum level, marked unfinished: interrupted in its third level,
    its summary lists exactly the cells of the first two (final: a cell depends only on earlier levels) with the
    uninterrupted run's equities, the solved strategy covers those, and --resume finishes it the same."""
    from truco_lab.lab import executors
    from truco_lab.lab.policy import MatchStrategy

    out = tmp_path / "m"
    # 8x11 and its successors: 7 cells in four levels (19 to 22)
    argv = ["match", "--out", str(out), "--cells", "8,11", "--workers", "1", "-q", "--no-table", *SMALL]
    assert main(argv) == 0
    whole = json.loads((out / "summary.json").read_text())
    assert whole["finished"] and whole["cells_planned"] == whole["cells_solved"] == 7
    calls = []
    real = executors.InlineExecutor.map

    def stop_at_the_third_level(self, jobs, on_result):
        calls.append(len(jobs))
        if len(calls) == 3:
            raise KeyboardInterrupt
        real(self, jobs, on_result)

    monkeypatch.setattr(executors.InlineExecutor, "map", stop_at_the_third_level)
    part = tmp_path / "p"
    argv[2] = str(part)
    assert main(argv) == 130
    s = json.loads((part / "summary.json").read_text())
    cells = {(c["score0"], c["score1"], c["dealer"]) for c in s["cells"]}
    assert not s["finished"] and s["cells_planned"] == 7 and s["cells_solved"] == len(cells) == 3
    assert cells == {(11, 11, 1), (10, 11, 0), (10, 11, 1)}  # the levels 22 and 21
    by = {(c["score0"], c["score1"], c["dealer"]): c["equity"] for c in whole["cells"]}
    assert all(c["equity"] == by[(c["score0"], c["score1"], c["dealer"])] for c in s["cells"])
    ms = MatchStrategy(part)
    assert ms.solved == cells  # what play, explain and the hints route to (covers())
    from truco_lab.lab.match_run import ensure_solved

    said = []
    assert ensure_solved(ms.rules, part, notify=said.append) == part
    assert said == [f"{part}: 3 of 7 cells solved so far (the run is unfinished); hands elsewhere play with the "
                    "fallback"]
    monkeypatch.setattr(executors.InlineExecutor, "map", real)
    capsys.readouterr()
    assert main([*argv, "--resume"]) == 0
    again = json.loads((part / "summary.json").read_text())
    assert again["finished"] and again["cells_solved"] == 7
    assert again["match_exploitability"] == whole["match_exploitability"]


def test_a_full_disk_is_one_line_not_a_traceback(tmp_path, capsys, monkeypatch):
    import errno

    import truco_lab.lab.match_run as MR

    def full(state, path):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(MR, "heatmap", full)
    out = tmp_path / "m"
    assert main(["match", "--out", str(out), "--cells", "11,11", "--workers", "1", "-q", *SMALL]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("truco-lab match: error: No space left on device: ")
    assert str(out / "equity.png") in err[0] and "--resume" in err[0] and "Traceback" not in err[0]
    monkeypatch.undo()
    assert main(["match", "--out", str(out), "--cells", "11,11", "--workers", "1", "-q", "--resume", *SMALL]) == 0
    assert (out / "equity.png").exists()
