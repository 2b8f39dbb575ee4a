"""The judge's messages in the reader's language.

The judge writes each check row with a stable ``message_id`` and its ``message_params``;
the ids, their English templates and parameter names are the grading contract's
(grader/contract.py ``MESSAGES``). Here every id maps to a gettext string with the same
parameters, so makemessages finds it and the Chinese catalogue translates it. Durations
read as people say them. A parameter that is a text per language (an exercise's own words:
a ``fail`` detail, the ``what`` a comparison names) is shown in the reader's language; one
that is a message of its own (the stop that kept a check from running) is worded from this
catalogue too.

Nothing is read back out of English text. A row stored before result format 3 whose
``detail`` or ``reason`` is English only, or a row without an id, shows the judge's English
as written (every row stores it): readable, never guessed at.
tests/platform/workbench/test_messages.py fails when an id of the contract has no entry
here, an entry names other parameters, or an entry has no Chinese.
"""

from __future__ import annotations

import re
from typing import Any

from django.utils.html import conditional_escape, format_html
from django.utils.safestring import mark_safe
from django.utils.translation import get_language, gettext, gettext_noop, ngettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from grader.contract import is_localized, is_message
from grader.host.performance import ratio_text

# message id -> its text with %(name)s parameters (the judge's ids and parameter names).
CATALOGUE: dict[str, str] = {
    "check.passed": gettext_noop("passed"),
    "check.failed": "%(detail)s",  # the exercise's own words, in every language (see _shown)
    "check.changed_input": gettext_noop(
        "your code changed its input (argument %(argument)s) in place; leave the inputs untouched"),
    "error.raised": gettext_noop("your code raised %(type)s"),
    "error.unusable_value": gettext_noop("the judge could not use what your code returned"),
    # Every failure of a hidden check, whatever went wrong inside (grader/contract.py HIDDEN_FAILED).
    "hidden.failed": gettext_noop("a hidden check failed"),
    # A performance case's failure other than its measurement (and hidden checks stored before hidden.failed).
    "hidden.wrong_answer": gettext_noop("wrong answer on a hidden case"),
    "hidden.time_limit": gettext_noop("time limit reached on a hidden case"),
    "hidden.too_slow": gettext_noop("too slow on a hidden performance case"),
    "hidden.memory_limit": gettext_noop("memory limit reached on a hidden case"),
    "hidden.output_limit": gettext_noop("too much output on a hidden case"),
    "hidden.runtime_error": gettext_noop("your code failed on a hidden case"),
    "not_run.correctness_failed": gettext_noop("not run: a correctness check failed"),
    "not_run.syntax_error": gettext_noop("not run: your code has a syntax error"),
    "not_run.load_error": gettext_noop("not run: your code raised an error while loading"),
    "not_run.stopped": gettext_noop("not run: %(reason)s"),
    # An exercise's rules: %(api)s is the refused name, %(reason)s the exercise's own words.
    "rules.refused": gettext_noop(
        "not run: your code uses %(api)s (line %(line)s), which this exercise does not allow: %(reason)s"),
    "rules.refused_import": gettext_noop(
        "your code imported %(api)s, which this exercise does not allow: %(reason)s"),
    "stop.budget_used": gettext_noop("the time limit was used up by earlier checks"),
    "stop.no_answer": gettext_noop("no answer within %(seconds)s (time limit)"),
    "stop.cpu_limit": gettext_noop("CPU time limit reached (%(seconds)s)"),
    "stop.memory_limit": gettext_noop("memory limit reached"),
    "stop.output_limit": gettext_noop("your program printed more than %(limit)s bytes"),
    "stop.file_too_large": gettext_noop("your program wrote a file larger than %(limit)s bytes"),
    "stop.killed": gettext_noop("your program was killed by %(signal)s"),
    "stop.exited": gettext_noop("your program exited (status %(status)s) in the middle of a check"),
    "stop.closed_channel": gettext_noop("your program closed the judge's channel"),
    "stop.bad_reply": gettext_noop("your program's reply to the judge was not valid"),
    "stop.cannot_start": gettext_noop("your program could not be started (%(reason)s)"),
    "stop.unpausable": gettext_noop("your program kept running while it should have been paused"),
    # Performance: numbers and a baseline's name; the chart beside the row draws them too.
    "perf.pass": gettext_noop(
        "fast enough: %(ratio)s× the %(baseline)s time (interval %(low)s–%(high)s, n=%(n)s); "
        "needed at most %(at_most)s×"),
    "perf.too_slow": gettext_noop(
        "too slow: %(ratio)s× the %(baseline)s time (interval %(low)s–%(high)s, n=%(n)s); "
        "needed at most %(at_most)s×"),
    "perf.undecided": gettext_noop(
        "measuring again: the machine was busy, and %(ratio)s× the %(baseline)s time "
        "(interval %(low)s–%(high)s, n=%(n)s) did not settle against at most %(at_most)s×"),
    "perf.pass_by_median": gettext_noop(
        "fast enough, by the median and the total time: %(ratio)s× the %(baseline)s time (interval %(low)s–%(high)s, "
        "n=%(n)s, measured twice without settling); needed at most %(at_most)s×"),
    "perf.too_slow_by_median": gettext_noop(
        "too slow, by the median and the total time: %(ratio)s× the %(baseline)s time (interval %(low)s–%(high)s, "
        "n=%(n)s, measured twice without settling); needed at most %(at_most)s×"),
    # Stored verdicts from before the rule that never passes an unsettled interval:
    "perf.within_noise": gettext_noop(
        "within noise: %(ratio)s× the %(baseline)s time (interval %(low)s–%(high)s, n=%(n)s); "
        "needed at most %(at_most)s×; not counted against you"),
    "perf.too_few_pairs": gettext_noop(
        "too slow: only %(n)s timed calls fitted in the %(budget)s budget, and a decision needs %(needed)s; "
        "needed at most %(at_most)s× the %(baseline)s time"
    ),
    # What the checks API says about a wrong answer; %(what)s is the exercise's own name for
    # the value, in the reader's language.
    "compare.returned_handle": gettext_noop(
        "%(what)s: expected %(expected)s, got %(got)s; return plain values (numbers, lists, dicts, arrays)"),
    "compare.not_a_dict": gettext_noop("%(what)s: expected a dict, got %(got)s"),
    "compare.missing_key": gettext_noop("%(what)s is missing key %(key)s"),
    "compare.unexpected_key": gettext_noop("%(what)s has an unexpected key %(key)s"),
    "compare.not_a_sequence": gettext_noop("%(what)s: expected a %(expected)s, got %(got)s"),
    "compare.length": gettext_noop("%(what)s: expected %(expected)s items, got %(got)s"),
    "compare.expected_got": gettext_noop("%(what)s: expected %(expected)s, got %(got)s"),
    "compare.not_a_number": gettext_noop("%(what)s: expected the number %(expected)s, got %(got)s"),
    "compare.nan": gettext_noop("%(what)s: expected %(expected)s, got %(got)s (NaN must match NaN)"),
    "compare.difference": gettext_noop("%(what)s: expected %(expected)s, got %(got)s (difference %(difference)s)"),
    "compare.not_a_tensor": gettext_noop("%(what)s: expected a torch tensor, got %(got)s"),
    "compare.not_an_array": gettext_noop("%(what)s: expected a numpy array, got %(got)s"),
    "compare.tensor_dtype": gettext_noop("%(what)s: expected dtype torch.%(expected)s, got torch.%(got)s"),
    "compare.dtype": gettext_noop("%(what)s: expected dtype %(expected)s, got %(got)s"),
    "compare.shape": gettext_noop("%(what)s: expected shape %(expected)s, got %(got)s"),
    "compare.nan_positions": gettext_noop(
        "%(what)s: NaN positions differ, first at index %(index)s: expected %(expected)s, got %(got)s"),
    "compare.inf_positions": gettext_noop(
        "%(what)s: infinity positions differ, first at index %(index)s: expected %(expected)s, got %(got)s"),
    "compare.inf_at": gettext_noop("%(what)s: expected %(expected)s at index %(index)s, got %(got)s"),
    "compare.elements": gettext_noop(
        "%(what)s: %(count)s of %(size)s elements differ; first at index %(index)s: "
        "expected %(expected)s, got %(got)s"),
    "compare.elements_within": gettext_noop(
        "%(what)s: %(count)s of %(size)s elements differ (rtol=%(rtol)s, atol=%(atol)s); "
        "first at index %(index)s: expected %(expected)s, got %(got)s"),
    "raises.wrong_message": gettext_noop(
        "%(what)s raised %(error)s: %(message)s, but the message should mention %(fragments)s"),
    "raises.returned": gettext_noop("expected %(what)s to raise an error, but it returned normally"),
    "raises.returned_mentioning": gettext_noop(
        "expected %(what)s to raise an error mentioning %(fragments)s, but it returned normally"),
}

# The perf rows of result format 2 had English phrases for parameters: such a stored row,
# which the templates above do not fit, reads as these.
_PERF_BEFORE_FORMAT_3 = {
    "perf.pass": gettext_noop("fast enough"),
    "perf.too_slow": gettext_noop("too slow"),
    "perf.within_noise": gettext_noop("within noise: not counted against you"),
    "perf.too_few_pairs": gettext_noop(
        "too slow: only %(n)s timed calls fitted in the %(budget)s budget, and a decision needs %(needed)s"
    ),
}

# Parameters that are prose, not values: shown as text, not as code; and times in seconds.
_PROSE = {"detail", "reason"}
_SECONDS = {"seconds", "budget"}


def duration(seconds: float) -> str:
    """A time as people say it: "850 ms", "12 seconds", "15 minutes", "1 hour 30 minutes"."""
    seconds = float(seconds)
    if seconds < 1:
        return gettext("%(n)s ms") % {"n": f"{seconds * 1000:.3g}"}
    if seconds < 90:
        whole = seconds == int(seconds) or seconds >= 10
        n = round(seconds) if whole else round(seconds, 1)
        return ngettext("%(n)s second", "%(n)s seconds", n if whole else 2) % {"n": n}
    minutes = round(seconds / 60)
    if minutes < 90:
        return ngettext("%(n)s minute", "%(n)s minutes", minutes) % {"n": minutes}
    hours, minutes = divmod(minutes, 60)
    text = ngettext("%(n)s hour", "%(n)s hours", hours) % {"n": hours}
    if minutes:
        text += " " + ngettext("%(n)s minute", "%(n)s minutes", minutes) % {"n": minutes}
    return text


BASELINES = {"reference": pgettext_lazy("perf baseline", "reference solution")}


def in_language(text: dict[str, Any]) -> str:
    """A check's own words (a text per language) in the reader's language, else in English,
    HTML-safe, with its `code spans` shown as code."""
    language = "zh-hans" if (get_language() or "en").lower().startswith("zh") else "en"
    chosen = str(text.get(language) or text.get("en") or "")
    parts = re.split(r"`([^`]+)`", chosen)
    return mark_safe("".join(  # every part is escaped; only our <code> tags are markup
        format_html("<code>{}</code>", part) if i % 2 else conditional_escape(part) for i, part in enumerate(parts)
    ))


_RATIOS = frozenset({"ratio", "low", "high"})


def _shown(name: str, value: Any) -> Any:
    """A parameter as the message shows it: a check's own words in the reader's language,
    a message of its own worded from the catalogue, durations in words, a baseline by its
    name, prose as text, values (names and data from the student's code) as code."""
    if is_message(value):
        return render(value)
    if isinstance(value, dict):
        return in_language(value) if is_localized(value) else conditional_escape(str(value))
    if name == "baseline" and str(value) in BASELINES:
        return BASELINES[str(value)]
    if name in _SECONDS:
        try:
            return duration(float(value))
        except (TypeError, ValueError):
            pass
    if name in _PROSE:
        return conditional_escape(str(value))  # English prose stored before format 4: as written
    if name in _RATIOS and isinstance(value, int | float) and ratio_text(float(value)):
        value = ratio_text(float(value))  # as the page's numbers and the boards print a ratio
    elif isinstance(value, float):
        value = f"{value:.3g}"
    return format_html("<code>{}</code>", value)


def render(row: dict[str, Any]) -> str:
    """One check row's message (or a message parameter) in the active language (HTML-safe)."""
    entry = CATALOGUE.get(str(row.get("message_id") or ""))
    params = row.get("message_params")
    if row.get("message_id") == "check.failed" and isinstance(params, dict):
        return _shown("detail", params.get("detail", ""))
    if entry is None or not isinstance(params, dict):
        return conditional_escape(str(row.get("message", "")))
    shown = {str(k): _shown(str(k), v) for k, v in params.items()}
    for template in (entry, _PERF_BEFORE_FORMAT_3.get(str(row.get("message_id")))):
        try:
            # The templates are ours and the translators'; every parameter is escaped by _shown.
            return mark_safe(gettext(template) % shown) if template else ""
        except (KeyError, TypeError, ValueError):
            continue
    return conditional_escape(str(row.get("message", "")))  # parameters that do not fit: the judge's own words


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
