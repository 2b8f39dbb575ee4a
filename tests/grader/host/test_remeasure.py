"""The top of a board measured again in one interleaved session: the order of the gradings,
and how a candidate's rounds become one ratio and one interval."""
import importlib
from types import SimpleNamespace

import pytest

from grader.contract import Kind

module = importlib.import_module("grader.host.remeasure")  # the package re-exports a function by that name


def perf(ratio, low, high):
    return {"cases": [{"name": "speed", "ratio": ratio, "interval": [low, high], "decision": "pass"}]}


@pytest.fixture
def graded(monkeypatch):
    """grade() replaced by a script: code -> list of (verdict, perf) per call, in call order."""
    calls = []

    def install(script):
        def grade(exercise, code, sandbox, *, seed, **rest):
            assert rest == {}  # graded as every grading is: nothing a re-measurement could be told by
            calls.append((code, seed))
            kind, timed = script[code][sum(1 for c, _ in calls if c == code) - 1]
            return SimpleNamespace(verdict=kind, perf=timed)

        monkeypatch.setattr(module, "grade", grade)
        return calls

    return install


def test_rounds_alternate_direction_on_one_seed(graded):
    accepted = [(Kind.ACCEPTED, perf(1.0, 0.9, 1.1))] * 4
    calls = graded({"a": accepted, "b": accepted, "c": accepted})
    measured = module.remeasure(None, [("1", "a"), ("2", "b"), ("3", "c")], None, seed=7, rounds=4)
    assert [code for code, _ in calls] == list("abc" "cba" "abc" "cba")
    assert {seed for _, seed in calls} == {7}
    assert [m.positions for m in measured] == [(0, 2, 0, 2), (1, 1, 1, 1), (2, 0, 2, 0)]
    # Over an even number of rounds every candidate's mean place is the same.
    assert len({sum(m.positions) for m in measured}) == 1


def test_a_candidates_rounds_combine_into_a_geometric_mean_and_an_interval_spanning_every_round(graded):
    graded({"a": [(Kind.ACCEPTED, perf(0.5, 0.45, 0.6)), (Kind.ACCEPTED, perf(2.0, 1.8, 2.2))]})
    [m] = module.remeasure(None, [("1", "a")], None, seed=1, rounds=2)
    assert m.verdict == "ACCEPTED"
    assert m.ratio == pytest.approx((1.0, 0.45, 2.2))
    assert [x for r in m.rounds for x in r] == pytest.approx([0.5, 0.45, 0.6, 2.0, 1.8, 2.2])
    assert module.rounds_combined([(3.0, 2.0, 4.0)]) == pytest.approx((3.0, 2.0, 4.0))


def test_a_round_that_is_not_accepted_or_timed_nothing_leaves_no_ratio(graded):
    graded({
        "slow": [(Kind.ACCEPTED, perf(1.0, 0.9, 1.1)), (Kind.TOO_SLOW, perf(3.0, 2.9, 3.1))],
        "untimed": [(Kind.ACCEPTED, perf(1.0, 0.9, 1.1)), (Kind.ACCEPTED, None)],
    })
    slow, untimed = module.remeasure(None, [("1", "slow"), ("2", "untimed")], None, seed=1, rounds=2)
    assert (slow.verdict, slow.ratio) == ("TOO_SLOW", None)
    assert slow.rounds == ((1.0, 0.9, 1.1), None)
    assert (untimed.verdict, untimed.ratio) == ("ACCEPTED", None)
