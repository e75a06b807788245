import re

import pytest

from truco_lab.cli import main


@pytest.mark.slow
def test_bench_engine_ends_with_a_rate_line(capsys):
    assert main(["bench", "engine", "--hands", "20000", "--seconds", "0.2"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert re.search(r"[\d,.]+ hands/s$", out[-1])
    assert any("python_kuhn_poker" in line for line in out)


def test_bad_arguments_exit_2_naming_the_argument(capsys):
    with pytest.raises(SystemExit) as e:
        main(["bench", "engine", "--hands", "-5"])
    assert e.value.code == 2
    assert "--hands" in capsys.readouterr().err
