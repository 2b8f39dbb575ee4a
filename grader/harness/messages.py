"""Every message the judge writes into a check row: a stable id, its English template, its parameters.

A row carries ``message`` (the English text), ``message_id`` and ``message_params``, so
the platform can show the same message in another language. Standard library only.

A parameter is a value (a string or a number, shown as data), or a text in every language
of LANGUAGES (``{"en": ..., "zh-hans": ...}``): what an exercise's checks say in their own
words (``fail``, ``what=``), which the platform shows in the reader's language. ``localize``
makes one from a template per language, and refuses a template that lacks a language or
whose placeholders differ between languages, so no check can speak English only.

For a hidden case the row only ever holds ``HIDDEN[kind]``: a fixed text per kind of
failure, with no parameters. Nothing the student's code chose (an exception's name or
message, an exit status, a line number, what it printed) and nothing of the hidden
inputs can reach it.
"""
from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any

from grader.contract import LANGUAGES

Localized = dict[str, str]  # language -> text, for every language of LANGUAGES

MESSAGES: dict[str, str] = {
    "check.passed": "passed",
    "check.failed": "{detail}",  # the exercise's own words about a wrong answer (visible cases), localized
    "check.changed_input": "your code changed its input (argument {argument}) in place; leave the inputs untouched",
    "error.raised": "{traceback}",  # the student's own exception, their own frames only (visible cases)
    "error.unusable_value": "the judge could not use what your code returned",
    "hidden.wrong_answer": "wrong answer on a hidden case",
    "hidden.time_limit": "time limit reached on a hidden case",
    "hidden.too_slow": "too slow on a hidden performance case",
    "hidden.memory_limit": "memory limit reached on a hidden case",
    "hidden.output_limit": "too much output on a hidden case",
    "hidden.runtime_error": "your code failed on a hidden case",
    "not_run.correctness_failed": "not run: a correctness check failed",
    "not_run.syntax_error": "not run: your code has a syntax error",
    "not_run.load_error": "not run: your code raised an error while loading",
    "not_run.stopped": "not run: {reason}",
    # An exercise's rules (exercise.toml [[rules]]): {api} is the refused name, {reason} the
    # exercise's own words (a localized text) for why.
    "rules.refused": "not run: your code uses {api} (line {line}), which this exercise does not allow: {reason}",
    "rules.refused_import": "your code imported {api}, which this exercise does not allow: {reason}",
    "stop.budget_used": "the time limit was used up by earlier checks",
    "stop.no_answer": "no answer within {seconds} s (time limit)",
    "stop.cpu_limit": "CPU time limit reached ({seconds} s)",
    "stop.memory_limit": "memory limit reached",
    "stop.output_limit": "your program printed more than {limit} bytes",
    "stop.file_too_large": "your program wrote a file larger than {limit} bytes",
    "stop.killed": "your program was killed by {signal}",
    "stop.exited": "your program exited (status {status}) in the middle of a check",
    "stop.closed_channel": "your program closed the judge's channel",
    "stop.bad_reply": "your program's reply to the judge was not valid",
    "stop.cannot_start": "your program could not be started ({reason})",
    "stop.unpausable": "your program kept running while it should have been paused",
    # Performance: numbers only (ratio = the student's time / the baseline's), worded by the platform.
    "perf.pass": (
        "fast enough: {ratio}x the {baseline} time (interval {low}-{high}, n={n}); needed at most {at_most}x"),
    "perf.too_slow": (
        "too slow: {ratio}x the {baseline} time (interval {low}-{high}, n={n}); needed at most {at_most}x"),
    "perf.undecided": (
        "measuring again: the machine was busy, and {ratio}x the {baseline} time (interval {low}-{high}, n={n}) "
        "did not settle against at most {at_most}x"),
    "perf.pass_by_median": (
        "fast enough, by the median: {ratio}x the {baseline} time (interval {low}-{high}, n={n}, measured twice "
        "without settling); needed at most {at_most}x"),
    "perf.too_slow_by_median": (
        "too slow, by the median: {ratio}x the {baseline} time (interval {low}-{high}, n={n}, measured twice "
        "without settling); needed at most {at_most}x"),
    # Stored verdicts from before the rule that never passes an unsettled interval:
    "perf.within_noise": (
        "within noise: {ratio}x the {baseline} time (interval {low}-{high}, n={n}); needed at most {at_most}x; "
        "not counted against you"),
    "perf.too_few_pairs": (
        "too slow: only {n} timed calls fitted in the {budget} s budget, and a decision needs {needed}; "
        "needed at most {at_most}x the {baseline} time"
    ),
    # What the checks API (api.py) says about a wrong answer. ``what`` names the value in the
    # exercise's words (a localized text); ``expected``, ``got``, ``key``, ``index``... are data.
    "compare.returned_handle": (
        "{what}: expected {expected}, got {got}; return plain values (numbers, lists, dicts, arrays)"),
    "compare.not_a_dict": "{what}: expected a dict, got {got}",
    "compare.missing_key": "{what} is missing key {key}",
    "compare.unexpected_key": "{what} has an unexpected key {key}",
    "compare.not_a_sequence": "{what}: expected a {expected}, got {got}",
    "compare.length": "{what}: expected {expected} items, got {got}",
    "compare.expected_got": "{what}: expected {expected}, got {got}",
    "compare.not_a_number": "{what}: expected the number {expected}, got {got}",
    "compare.nan": "{what}: expected {expected}, got {got} (NaN must match NaN)",
    "compare.difference": "{what}: expected {expected}, got {got} (difference {difference})",
    "compare.not_a_tensor": "{what}: expected a torch tensor, got {got}",
    "compare.not_an_array": "{what}: expected a numpy array, got {got}",
    "compare.tensor_dtype": "{what}: expected dtype torch.{expected}, got torch.{got}",
    "compare.dtype": "{what}: expected dtype {expected}, got {got}",
    "compare.shape": "{what}: expected shape {expected}, got {got}",
    "compare.nan_positions": "{what}: NaN positions differ, first at index {index}: expected {expected}, got {got}",
    "compare.inf_positions": (
        "{what}: infinity positions differ, first at index {index}: expected {expected}, got {got}"),
    "compare.inf_at": "{what}: expected {expected} at index {index}, got {got}",
    "compare.elements": (
        "{what}: {count} of {size} elements differ; first at index {index}: expected {expected}, got {got}"),
    "compare.elements_within": (
        "{what}: {count} of {size} elements differ (rtol={rtol}, atol={atol}); "
        "first at index {index}: expected {expected}, got {got}"),
    "raises.wrong_message": "{what} raised {error}: {message}, but the message should mention {fragments}",
    "raises.returned": "expected {what} to raise an error, but it returned normally",
    "raises.returned_mentioning": "expected {what} to raise an error mentioning {fragments}, but it returned normally",
}

# Words the checks API and the judge put into a ``what`` (localized texts, not message ids).
PHRASES: dict[str, Localized] = {
    "result": {"en": "result", "zh-hans": "结果"},
    "your_code": {"en": "your code", "zh-hans": "你的代码"},
    "within": {"en": "{outer}: {inner}", "zh-hans": "{outer}：{inner}"},  # a part of a value, or a call
    "first_call": {"en": "the first timed call", "zh-hans": "第一次计时调用"},
    "warmup_call": {"en": "warm-up call {n}", "zh-hans": "第 {n} 次预热调用"},
    "timed_call": {"en": "timed call {n}", "zh-hans": "第 {n} 次计时调用"},
}

HIDDEN: dict[str, str] = {
    "WRONG_ANSWER": "hidden.wrong_answer",
    "TIME_LIMIT": "hidden.time_limit",
    "TOO_SLOW": "hidden.too_slow",
    "MEMORY_LIMIT": "hidden.memory_limit",
    "OUTPUT_LIMIT": "hidden.output_limit",
    "RUNTIME_ERROR": "hidden.runtime_error",
}


class Message:
    """A message id with its parameters; ``str()`` is the English text."""

    def __init__(self, message_id: str, **params: Any):
        if message_id not in MESSAGES:
            raise KeyError(f"unknown message id {message_id!r}")
        self.id = message_id
        self.params = params

    def __str__(self) -> str:
        return MESSAGES[self.id].format(**{k: in_english(v) for k, v in self.params.items()})

    def __repr__(self) -> str:
        return f"Message({self.id!r}, {self.params!r})"

    def row_fields(self) -> dict[str, Any]:
        params = {k: dict(v) if isinstance(v, dict) else v for k, v in self.params.items()}
        return {"message": str(self), "message_id": self.id, "message_params": params}

    def within(self, outer: Localized) -> Message:
        """The same message about a part of ``outer`` (a call, a value): its ``what`` (or
        ``detail``) becomes "outer: what"."""
        lead = "what" if "what" in self.params else "detail"
        inner = self.params.get(lead, "")
        return Message(self.id, **{**self.params, lead: localize(PHRASES["within"], outer=outer, inner=inner)})


class UntranslatedText(BaseException):
    """A check's own words without every language, or with placeholders that differ between them.

    A BaseException, so that the judge's ``except Exception`` around a check (which blames
    the student's values) lets it through: an exercise's fault is a platform fault.
    """


def placeholders(template: str) -> set[str]:
    """The names a ``str.format`` template fills: ``"{x!r} of {shape[0]}"`` -> {"x", "shape"}."""
    names = set()
    try:
        for _, field, _, _ in string.Formatter().parse(template):
            if field is not None:
                names.add(field.split(".", 1)[0].split("[", 1)[0])
    except ValueError as error:  # a lone brace: write {{ or }} for a brace in the text
        raise UntranslatedText(f"{template!r} is not a valid template: {error}") from None
    return names


def check_localized(template: object, *, is_template: bool = True) -> Localized:
    """``template`` as a Localized, or UntranslatedText saying what is missing. A plain text
    (``is_template=False``: braces are text, not placeholders) needs only every language."""
    example = '{"en": "...{x}...", "zh-hans": "...{x}..."}'
    if isinstance(template, str):
        raise UntranslatedText(f"give the text in every language, e.g. {example}, not only {template[:60]!r}")
    if not isinstance(template, Mapping) or not all(isinstance(v, str) for v in template.values()):
        raise UntranslatedText(f"a text must be a dict of language to string such as {example}")
    missing = [language for language in LANGUAGES if not str(template.get(language, "")).strip()]
    if missing:
        raise UntranslatedText(f"the text {dict(template)!r} has no {', '.join(missing)}")
    unknown = sorted(set(template) - set(LANGUAGES))
    if unknown:
        raise UntranslatedText(f"the text {dict(template)!r} has unknown languages {unknown}; use {list(LANGUAGES)}")
    wanted = placeholders(template["en"]) if is_template else set()
    for language in LANGUAGES if is_template else ():
        if placeholders(template[language]) != wanted:
            raise UntranslatedText(
                f"the {language} text {template[language]!r} fills {sorted(placeholders(template[language]))}, "
                f"the English one {sorted(wanted)}: every language needs the same placeholders")
    return {language: template[language] for language in LANGUAGES}


def localize(template: object, **params: Any) -> Localized:
    """``template`` (one str.format template per language) filled with ``params`` in each
    language; a Localized parameter is filled in its own language, any other value the same
    in every language."""
    checked = check_localized(template)
    return {
        language: checked[language].format(
            **{k: v[language] if _is_localized(v) else v for k, v in params.items()})
        for language in LANGUAGES
    }


def as_code(text: str) -> Localized:
    """A value's name that is code (``"x @ w + b"``), which reads the same in every language; the
    page shows it as code (a check's texts mark code with backticks: "the `.grad` of x")."""
    return {language: f"`{text}`" for language in LANGUAGES}


def in_english(value: Any) -> Any:
    """A parameter as the English text shows it."""
    return value["en"] if _is_localized(value) else value


def _is_localized(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == set(LANGUAGES)


def hidden(kind: str | None) -> Message:
    """The only message a hidden case may show for a failure of ``kind``."""
    return Message(HIDDEN.get(kind or "", "hidden.runtime_error"))
