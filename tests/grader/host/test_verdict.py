"""One verdict from the checks' rows, the score, and the stored document."""
from __future__ import annotations

from grader.contract import CheckRow, Kind
from grader.host.verdict import Usage, Verdict, overall_kind, score_of


def row(name, passed, kind=None, points=1.0):
    return CheckRow(name=name, passed=passed, visible=True, points=points if passed else 0.0, max_points=points,
                    kind=kind)


def test_all_passed_is_accepted_with_full_score():
    checks = [row("a", True), row("b", True, points=2)]
    assert overall_kind(checks) == Kind.ACCEPTED and score_of(checks) == 1.0


def test_only_wrong_answers_with_some_points_is_partial():
    checks = [row("a", True), row("b", False, Kind.WRONG_ANSWER, points=3)]
    assert overall_kind(checks) == Kind.PARTIAL and score_of(checks) == 0.25


def test_nothing_right_is_a_wrong_answer():
    assert overall_kind([row("a", False, Kind.WRONG_ANSWER)]) == Kind.WRONG_ANSWER


def test_a_crash_explains_more_than_a_wrong_answer():
    checks = [row("a", True), row("b", False, Kind.WRONG_ANSWER), row("c", False, Kind.RUNTIME_ERROR)]
    assert overall_kind(checks) == Kind.RUNTIME_ERROR


def test_slow_but_right_is_too_slow():
    assert overall_kind([row("a", True), row("fast", False, Kind.TOO_SLOW)]) == Kind.TOO_SLOW


def test_round_trip_through_a_dict():
    verdict = Verdict(Kind.PARTIAL, 0.5, [row("a", True), row("b", False, Kind.WRONG_ANSWER)], perf=None,
                      usage=Usage(1.5, 1.2, 10_000), backend="local", stdout="hi", notes=["n"])
    data = verdict.to_dict()
    assert data["verdict"] == "PARTIAL" and data["usage"] == {"wall_s": 1.5, "cpu_s": 1.2, "max_rss_bytes": 10_000,
                                                           "fresh_imports": []}
    assert set(data["checks"][0]) >= {"name", "passed", "visible", "message", "points", "max_points"}
    assert Verdict.from_dict(data) == verdict


def test_internal_error_is_a_platform_fault():
    verdict = Verdict.internal_error("the sandbox fell over", backend="docker")
    assert verdict.is_internal_error and verdict.score == 0.0 and verdict.notes == ["the sandbox fell over"]
    assert not Verdict(Kind.TIME_LIMIT, 0.0).is_internal_error
