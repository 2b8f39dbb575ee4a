"""A stored verdict document, as a student reads it: a headline that says what happened,
checks under their titles in the reader's language, one block for an error that stopped
everything, and performance as numbers a chart can draw.

Everything here is read from the rows' structured fields (grader/contract.py): a check's
title, expected and got, the line an error points at; titles the row lacks (a performance
case, a result stored before format 4) come from the version, which stored them when it was
published. Nothing is parsed back out of English text, and checks.py is never read here: a
result stored before those fields existed shows its English text as written, without line
marks or an expected/got table.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from django.utils.translation import get_language, gettext, ngettext

from grader.contract import HIDDEN_FAILED, NOT_LOADED
from grader.host.performance import interval_text, overall_ratio, ratio_text
from workbench.messages import VERDICT_NAMES, duration, render

Titles = Mapping[str, Mapping[str, str]]  # check name -> {language: title}


@dataclasses.dataclass
class ShownCheck:
    """A check as the verdict page shows it, in the reader's language (read from a contract.CheckRow)."""

    name: str
    title: str
    passed: bool
    visible: bool
    points: float
    max_points: float
    message: str
    kind: str | None
    expected: str | None = None
    got: str | None = None
    traceback: str = ""  # the student's own frames, when their code raised
    open: bool = False  # the first failing visible check is shown unfolded


@dataclasses.dataclass
class PerfCase:
    title: str
    decision: str
    ratio: float | None
    low: float | None
    high: float | None
    at_most: float
    student_s: float | None
    baseline_s: float | None
    n: int
    raw: dict[str, Any]
    # The grading's, shared by its cases: the machine they were timed on and how busy it was.
    host: dict[str, Any] = dataclasses.field(default_factory=dict)
    host_load: dict[str, Any] = dataclasses.field(default_factory=dict)

    def scale(self) -> float:
        """The right end of the chart's axis, in ratio units."""
        return max(v for v in (self.at_most * 1.5, (self.high or 0) * 1.1, (self.ratio or 0) * 1.1, 1.5) if v)

    def x(self, value: float | None) -> float:
        """Percent across the chart for a ratio."""
        return round(100 * min(max(value or 0, 0), self.scale()) / self.scale(), 2)

    @property
    def chart(self) -> dict[str, float]:
        return {
            "ratio": self.x(self.ratio),
            "low": self.x(self.low),
            "high": self.x(self.high),
            "limit": self.x(self.at_most),
            "one": self.x(1.0),
            "width": round(self.x(self.high) - self.x(self.low), 2),
        }

    @property
    def ratio_text(self) -> str:
        return ratio_text(self.ratio)

    @property
    def low_text(self) -> str:
        return ratio_text(self.low)

    @property
    def high_text(self) -> str:
        return ratio_text(self.high)

    @property
    def student_time(self) -> str:
        return duration(self.student_s) if self.student_s is not None else "–"

    @property
    def baseline_time(self) -> str:
        return duration(self.baseline_s) if self.baseline_s is not None else "–"


@dataclasses.dataclass
class VerdictView:
    kind: str
    kind_name: str
    headline: str
    points: float
    max_points: float
    checks: list[ShownCheck]
    stopped: str | None  # a syntax or load error that kept every check from running
    stopped_line: int | None
    perf: list[PerfCase]
    error_lines: list[dict[str, Any]]
    notes: list[str]
    # The number a board shows for this grading (full scores only), printed as the board prints it.
    board_speed: str = ""


def _title(name: str, row_title: Any, titles: Titles) -> str:
    """The check's title in the reader's language: the row's own, else the version's, else its name."""
    language = "zh-hans" if (get_language() or "en").lower().startswith("zh") else "en"
    for given in (row_title if isinstance(row_title, Mapping) else {}, titles.get(name) or {}):
        if given.get(language) or given.get("en"):
            return str(given.get(language) or given["en"])
    return name.replace("_", " ").capitalize()


def _points(value: float) -> str:
    return f"{value:g}"


def _line(row: Mapping[str, Any]) -> int | None:
    line = row.get("line")
    return line if type(line) is int and line > 0 else None


def error_lines(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Lines of the student's file that an error points at, for the editor's gutter: the
    ``line`` of each failed visible check, with the last line of its message."""
    found: dict[int, str] = {}
    for row in result.get("checks") or []:
        if not isinstance(row, dict) or not row.get("visible") or row.get("passed") or _line(row) is None:
            continue
        text = _load_error(row) or str(row.get("message", ""))
        found.setdefault(_line(row) or 0, (text.strip().splitlines() or [""])[-1][:300])
    return [{"line": line, "message": message} for line, message in sorted(found.items())]


def verdict_view(result: dict[str, Any], titles: Titles | None = None) -> VerdictView:
    """``result`` as the student reads it; ``titles``: the version's stored check titles."""
    titles = titles or {}
    raw_checks = [c for c in result.get("checks") or [] if isinstance(c, dict)]
    kind = str(result.get("verdict", ""))
    notes = [str(n) for n in result.get("notes") or []]
    rows = [
        ShownCheck(
            name=str(c.get("name", "")),
            title=_title(str(c.get("name", "")), c.get("title"), titles),
            passed=bool(c.get("passed")),
            visible=bool(c.get("visible")),
            points=float(c.get("points") or 0),
            max_points=float(c.get("max_points") or 0),
            message=render(c),
            kind=c.get("kind"),
        )
        for c in raw_checks
    ]
    for row, raw in zip(rows, raw_checks, strict=True):
        if not row.passed and row.visible:
            given = raw.get("message_params")
            params: dict[str, Any] = given if isinstance(given, dict) else {}
            row.traceback = str(params.get("traceback", "")) if raw.get("message_id") == "error.raised" else ""
            if raw.get("expected") is not None and raw.get("got") is not None:
                row.expected, row.got = str(raw["expected"]), str(raw["got"])
            elif str(raw.get("message_id") or "").startswith("compare.") and "expected" in params and "got" in params:
                # Format 3 had no such fields, but its comparison parameters say the same.
                row.expected, row.got = str(params["expected"]), str(params["got"])
    first_failure = next((r for r in rows if r.visible and not r.passed), None)
    if first_failure:
        first_failure.open = True

    points = sum(min(r.points, r.max_points) for r in rows)
    max_points = sum(r.max_points for r in rows)
    stopped, stopped_line = _stopped(kind, raw_checks)
    perf = _perf(result.get("perf"), titles)
    return VerdictView(
        kind=kind,
        kind_name=str(VERDICT_NAMES.get(kind, kind)),
        headline=_headline(kind, rows, points, max_points, stopped, stopped_line),
        points=points,
        max_points=max_points,
        checks=[] if stopped else rows,
        stopped=stopped,
        stopped_line=stopped_line,
        perf=perf,
        error_lines=error_lines(result),
        notes=[n for n in notes if not stopped or n != stopped],
        board_speed=_board_speed(result),
    )


def _board_speed(result: dict[str, Any]) -> str:
    """What leaderboards.services.entry_record stores for this grading, in the board's format."""
    score = result.get("score")
    overall = overall_ratio(result) if isinstance(score, int | float) and score >= 1 - 1e-9 else None
    return interval_text(*overall) if overall else ""


def _stopped(kind: str, rows: list[dict[str, Any]]) -> tuple[str | None, int | None]:
    """The error that kept every check from running, if that is what happened: no check
    passed, and the visible ones say they did not run because the code did not load."""
    if not rows or any(r.get("passed") for r in rows) or kind not in ("SYNTAX_ERROR", "RUNTIME_ERROR"):
        return None, None
    # A failed hidden check is a wrong answer however it failed (HIDDEN_FAILED): it says nothing here.
    told = [r for r in rows if r.get("message_id") != HIDDEN_FAILED]
    if kind == "RUNTIME_ERROR" and not all(r.get("kind") == "RUNTIME_ERROR" for r in told):
        return None, None
    error = next((_load_error(r) for r in rows if r.get("visible") and _load_error(r)), None)
    if error is None:
        return None, None
    return error, next((_line(r) for r in rows if _line(r) is not None), None)


def _load_error(row: Mapping[str, Any]) -> str | None:
    """The student's error that kept their code from loading, as the row carries it."""
    params = row.get("message_params")
    if str(row.get("message_id")) not in NOT_LOADED or not isinstance(params, dict):
        return None
    error = params.get("error")
    return error if isinstance(error, str) and error else None


def _headline(
    kind: str, rows: list[ShownCheck], points: float, max_points: float, stopped: str | None, line: int | None
) -> str:
    if stopped:
        if kind == "SYNTAX_ERROR":
            if line:
                return gettext("Your code has a syntax error on line %(line)s, so no check could run.") % {"line": line}
            return gettext("Your code has a syntax error, so no check could run.")
        if line:
            return gettext("Your code raised an error while loading (line %(line)s), so no check could run.") % {
                "line": line
            }
        return gettext("Your code raised an error while loading, so no check could run.")
    if not rows:
        return str(VERDICT_NAMES.get(kind, kind))
    score = gettext("%(points)s of %(max)s points") % {"points": _points(points), "max": _points(max_points)}
    if kind == "ACCEPTED":
        return score + gettext(": every check passed.")
    failed_visible = sum(1 for r in rows if not r.passed and r.visible)
    failed_hidden = sum(1 for r in rows if not r.passed and not r.visible)
    parts = []
    if failed_visible:
        parts.append(
            ngettext("%(n)s visible check failed", "%(n)s visible checks failed", failed_visible)
            % {"n": failed_visible}
        )
    if failed_hidden:
        parts.append(
            ngettext("%(n)s hidden check failed", "%(n)s hidden checks failed", failed_hidden) % {"n": failed_hidden}
        )
    return score + gettext(": ") + gettext(", ").join(parts) + gettext(".")


def _table(perf: Any, key: str) -> dict[str, Any]:
    """``perf[key]`` when it is a table (a verdict stored before it existed has none)."""
    value = perf.get(key) if isinstance(perf, dict) else None
    return value if isinstance(value, dict) else {}


def _perf(perf: Any, titles: Titles) -> list[PerfCase]:
    cases = perf.get("cases") if isinstance(perf, dict) else None
    host = _table(perf, "host")
    host_load = _table(perf, "host_load")
    out = []
    for case in cases or []:
        if not isinstance(case, dict) or "at_most" not in case:
            continue
        interval = case.get("interval") or [None, None]
        out.append(
            PerfCase(
                title=_title(str(case.get("name", "")), None, titles),
                decision=str(case.get("decision", "")),
                ratio=case.get("ratio"),
                low=interval[0],
                high=interval[1],
                at_most=float(case["at_most"]),
                student_s=case.get("student_median_s"),
                baseline_s=case.get("baseline_median_s"),
                n=int(case.get("n") or 0),
                raw=case,
                host=host,
                host_load=host_load,
            )
        )
    return out
