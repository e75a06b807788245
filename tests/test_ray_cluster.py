"""A two-node Ray cluster on the loopback address: a worker process killed with SIGKILL in the middle of a
task, the driver's ``--resume`` finishing, and the equities equal to the local executor's."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

DECK = ["--ranks", "7QJKA23", "--suits", "c", "--max-stake", "3"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ray(env, *args: str) -> None:
    ray = str(Path(sys.executable).with_name("ray"))
    subprocess.run([ray, *args], env=env, check=True, capture_output=True, timeout=180)


def _ray_pids() -> set[int]:
    out = subprocess.run(["pgrep", "-f", "ray::|raylet|gcs_server|ray/dashboard|ray/_private"], capture_output=True,
                         text=True).stdout.split()
    return {int(p) for p in out}


def _kill_one_task_worker(deadline: float) -> bool:
    """SIGKILL the first process running one of our tasks (Ray names it ``ray::_ray_run``)."""
    while time.monotonic() < deadline:
        out = subprocess.run(["pgrep", "-f", "ray::_ray_run"], capture_output=True, text=True).stdout.split()
        if out:
            os.kill(int(out[0]), signal.SIGKILL)
            return True
        time.sleep(0.2)
    return False


@pytest.mark.slow
def test_two_node_ray_survives_a_killed_worker(tmp_path):
    pytest.importorskip("ray", reason="Ray is the optional extra 'ray' (make test installs it)")
    from truco_lab.lab.equity import EquityTable

    port = _free_port()
    temp = tempfile.mkdtemp(prefix="rt", dir="/tmp")  # short: Ray's socket paths live under it
    token = tmp_path / "token"
    token.write_text(secrets.token_hex(32))
    env = dict(os.environ, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=str(token), RAY_USAGE_STATS_ENABLED="0")
    node = ["--node-ip-address=127.0.0.1", "--num-cpus=1", "--object-store-memory=200000000",
            f"--temp-dir={temp}", "--disable-usage-stats"]
    exe = str(Path(sys.executable).with_name("truco-lab"))
    before = _ray_pids()  # another test's Ray, if any, is left alone
    try:
        _ray(env, "start", "--head", f"--port={port}", "--include-dashboard=false", *node)
        _ray(env, "start", f"--address=127.0.0.1:{port}", *node)
        cmd = [exe, "match", "--executor", "ray", "--ray-address", f"127.0.0.1:{port}", "--cells", "eleven",
               *DECK, "--out", str(tmp_path / "ray"), "-q"]
        driver = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        killed = _kill_one_task_worker(time.monotonic() + 240)
        driver.communicate(timeout=900)
        assert killed, "no task ever ran"
        # whether Ray's retry finished the run or the driver gave up, --resume completes it
        again = subprocess.run(cmd + ["--resume"], env=env, capture_output=True, text=True, timeout=900)
        assert again.returncode == 0, again.stderr[-2000:]
    finally:
        subprocess.run(["pkill", "-9", "-f", temp], check=False)
        for pid in _ray_pids() - before:  # the agents' command lines do not name the temp folder
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(temp, ignore_errors=True)
    local = subprocess.run([exe, "match", "--cells", "eleven", *DECK, "--out", str(tmp_path / "local"), "-q"],
                           capture_output=True, text=True, timeout=900)
    assert local.returncode == 0, local.stderr[-2000:]
    a = EquityTable.load(tmp_path / "ray" / "equity.parquet")
    b = EquityTable.load(tmp_path / "local" / "equity.parquet")
    assert np.array_equal(a.values, b.values, equal_nan=True)
    assert np.isfinite(a.values).sum() > 0
