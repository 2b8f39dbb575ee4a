"""`python -m grader.engines.demo`: the seed's example, both ways."""
from __future__ import annotations

import subprocess
import sys

from grader.engines import demo


def test_demo_predicts_one_both_ways_and_shows_the_difference(capsys):
    demo.main()
    out = capsys.readouterr().out
    assert "both engines predict 1 and 1" in out
    static_part, dynamic_part = out.split("=== dynamic")[0], out.split("=== dynamic")[1]
    # the plan is printed before any value exists; values come only with the run
    assert static_part.index("[compile] plan") < static_part.index("[run]")
    assert "pred = 1" in static_part.split("[run]")[1]
    assert "[refused]" in static_part
    assert "[line] wx = w * x = 10" in dynamic_part and "[line] z = wx + b = 8" in dynamic_part
    assert "data-dependent control flow" in out


def test_demo_runs_as_a_module():
    result = subprocess.run([sys.executable, "-m", "grader.engines.demo"], capture_output=True, text=True,
                            timeout=120, check=True)
    assert "static graph" in result.stdout and "dynamic graph" in result.stdout
