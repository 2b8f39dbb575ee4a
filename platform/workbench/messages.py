"""The judge's messages in the reader's language.

The judge writes each check row with a stable ``message_id`` and its ``message_params``
(grader/harness/messages.py holds the ids and their English templates). Here every id
maps to gettext strings, so makemessages finds them and the Chinese catalogue translates
them; a count parameter picks the plural with ngettext, and durations read as people say
them. A row without an id (an older verdict) shows the judge's English ``message``.
tests/platform/workbench/test_messages.py fails when an id the judge can emit has no
entry here, or an entry has no Chinese.
"""
from __future__ import annotations

from typing import Any

from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils.translation import gettext, ngettext, ngettext_lazy, pgettext_lazy
from django.utils.translation import gettext_lazy as _


# id -> the English template with %(name)s parameters, marked for makemessages. A plural
# entry picks its form from the parameter named in ngettext_lazy's third argument.
CATALOGUE: dict[str, Any] = {
    "passed": _("passed"),
    "not_run.correctness_failed": _("not run: a correctness check failed first"),
    "not_run.syntax_error": _("not run: your code has a syntax error"),
    "not_run.load_error": _("not run: your code raised an error while loading"),
    "not_run.stopped": _("not run: %(reason)s"),
    "hidden.wrong_answer": _("wrong answer on a hidden case"),
    "hidden.time_limit": _("time limit reached on a hidden case"),
    "hidden.memory_limit": _("memory limit reached on a hidden case"),
    "hidden.output_limit": _("too much output on a hidden case"),
    "raised": _("your code raised %(error)s at line %(line)s"),
    "time_limit": _("your code ran longer than %(limit_s)s"),
    "memory_limit": _("your code used more than %(limit_mb)s MB of memory"),
    "output_limit": _("your program printed more than %(limit_bytes)s bytes"),
    "compare.expected_got": _("%(what)s: expected %(expected)s, got %(got)s"),
    "compare.items": ngettext_lazy(
        "%(what)s: expected %(count)s item, got %(got)s", "%(what)s: expected %(count)s items, got %(got)s", "count"
    ),
    "compare.missing_key": _("%(what)s is missing the key %(key)s"),
    "compare.unexpected_key": _("%(what)s has an unexpected key %(key)s"),
    "compare.shape": _("%(what)s: expected shape %(expected)s, got %(got)s"),
    "compare.dtype": _("%(what)s: expected dtype %(expected)s, got %(got)s"),
    "compare.elements_differ": ngettext_lazy(
        "%(what)s: %(count)s of %(size)s element differs; first at index %(index)s: expected %(expected)s, got %(got)s",
        "%(what)s: %(count)s of %(size)s elements differ; first at index %(index)s: expected %(expected)s, got %(got)s",
        "count",
    ),
    "raises.returned": _("expected %(what)s to raise an error, but it returned normally"),
    "raises.returned_mentioning": _("expected %(what)s to raise an error mentioning %(fragments)s, but it returned normally"),
    "raises.wrong_message": _("%(what)s raised %(error)s: %(message)s, but the message should mention %(fragments)s"),
    "perf.pass": _("%(ratio)s× the %(baseline)s's time; the limit is %(at_most)s×"),
    "perf.too_slow": _("too slow: %(ratio)s× the %(baseline)s's time; the limit is %(at_most)s×"),
    "perf.within_noise": _("%(ratio)s× the %(baseline)s's time, within noise of the %(at_most)s× limit: counted as passed"),
}


def duration(seconds: float) -> str:
    """A time as people say it: "850 ms", "12 seconds", "15 minutes", "1 hour 30 minutes"."""
    seconds = float(seconds)
    if seconds < 1:
        return gettext("%(n)s ms") % {"n": f"{seconds * 1000:.3g}"}
    if seconds < 90:
        n = round(seconds, 1) if seconds < 10 and seconds != int(seconds) else round(seconds)
        return ngettext("%(n)s second", "%(n)s seconds", n if isinstance(n, int) else 2) % {"n": n}
    minutes = round(seconds / 60)
    if minutes < 90:
        return ngettext("%(n)s minute", "%(n)s minutes", minutes) % {"n": minutes}
    hours, minutes = divmod(minutes, 60)
    text = ngettext("%(n)s hour", "%(n)s hours", hours) % {"n": hours}
    if minutes:
        text += " " + ngettext("%(n)s minute", "%(n)s minutes", minutes) % {"n": minutes}
    return text


def _shown(name: str, value: Any) -> Any:
    """A parameter as the message shows it: durations and baselines in words, the rest (values,
    names from the student's code) escaped and set as code."""
    if name.endswith("_s") and isinstance(value, int | float):
        return duration(value)
    if name == "baseline":
        return BASELINES.get(str(value), value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value  # a plural form is picked from it
    if isinstance(value, float):
        value = f"{value:.3g}"
    return format_html("<code>{}</code>", value)


BASELINES = {"reference": pgettext_lazy("perf baseline", "reference solution")}


def render(row: dict[str, Any]) -> str:
    """One check row's message in the active language (HTML-safe)."""
    entry = CATALOGUE.get(str(row.get("message_id") or ""))
    if entry is None:
        return str(row.get("message", ""))
    params = row.get("message_params") or {}
    if not isinstance(params, dict):
        return str(row.get("message", ""))
    shown = {str(k): _shown(str(k), v) for k, v in params.items()}
    try:
        # The templates are ours and the translators'; every parameter is escaped above.
        return mark_safe(str(entry % shown))
    except (KeyError, TypeError, ValueError):
        return str(row.get("message", ""))  # params that do not fit: the judge's own words


# Verdict names and difficulty tags, as the reader says them.
VERDICT_NAMES = {
    "ACCEPTED": _("Accepted"),
    "PARTIAL": _("Partly right"),
    "WRONG_ANSWER": _("Wrong answer"),
    "TOO_SLOW": _("Too slow"),
    "TIME_LIMIT": _("Time limit"),
    "MEMORY_LIMIT": _("Memory limit"),
    "OUTPUT_LIMIT": _("Too much output"),
    "RUNTIME_ERROR": _("Runtime error"),
    "SYNTAX_ERROR": _("Syntax error"),
    "INTERNAL_ERROR": _("Platform error"),
}
DIFFICULTIES = {"easy": _("easy"), "medium": _("medium"), "hard": _("hard")}
DIFFICULTY_ORDER = {"easy": 0, "medium": 1, "hard": 2}
