"""The judge's messages, as the harness writes them into check rows.

The ids, their English templates, the fixed texts of hidden cases and the rules for a
check's own words live in the grading contract (grader/contract.py), which the platform
reads too; here a ``Message`` fills one, and ``localize``/``as_code`` make a check's words.

A parameter is a value (a string or a number, shown as data), a text in every language
of LANGUAGES (``{"en": ..., "zh-hans": ...}``): what an exercise's checks say in their own
words (``fail``, ``what=``), which the platform shows in the reader's language; or another
Message (the stop that kept a check from running). ``localize`` makes a text from a
template per language, and refuses a template that lacks a language or whose placeholders
differ between languages, so no check can speak English only.

A failed hidden check's row is ``contract.hidden_failure``: "a hidden check failed", a wrong
answer, with no parameters, whatever went wrong. Nothing the student's code chose (how it
failed, an exception's name or message, an exit status, a line number, what it printed) and
nothing of the hidden inputs can reach it. A performance case's failure that is not a
measurement holds ``HIDDEN[kind]``, a fixed text per kind. Standard library only.
"""
from __future__ import annotations

from typing import Any

from grader.contract import (
    HIDDEN,
    LANGUAGES,
    MESSAGES,
    Localized,
    UntranslatedText,
    check_localized,
    is_localized,
    placeholders,
)

__all__ = [
    "HIDDEN", "MESSAGES", "PHRASES", "Localized", "Message", "UntranslatedText", "as_code", "check_localized",
    "hidden", "in_english", "localize", "placeholders",
]


# Words the checks API and the judge put into a ``what`` (localized texts, not message ids).
PHRASES: dict[str, Localized] = {
    "result": {"en": "result", "zh-hans": "结果"},
    "your_code": {"en": "your code", "zh-hans": "你的代码"},
    "within": {"en": "{outer}: {inner}", "zh-hans": "{outer}：{inner}"},  # a part of a value, or a call
    "first_call": {"en": "the first timed call", "zh-hans": "第一次计时调用"},
    "warmup_call": {"en": "warm-up call {n}", "zh-hans": "第 {n} 次预热调用"},
    "timed_call": {"en": "timed call {n}", "zh-hans": "第 {n} 次计时调用"},
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

    def as_param(self) -> dict[str, Any]:
        """This message as another message's parameter (the contract's nested form)."""
        return {"message_id": self.id, "message_params": _plain(self.params)}

    def __repr__(self) -> str:
        return f"Message({self.id!r}, {self.params!r})"

    def row_fields(self) -> dict[str, Any]:
        return {"message": str(self), "message_id": self.id, "message_params": _plain(self.params)}

    def within(self, outer: Localized) -> Message:
        """The same message about a part of ``outer`` (a call, a value): its ``what`` (or
        ``detail``) becomes "outer: what"."""
        lead = "what" if "what" in self.params else "detail"
        inner = self.params.get(lead, "")
        return Message(self.id, **{**self.params, lead: localize(PHRASES["within"], outer=outer, inner=inner)})


def localize(template: object, **params: Any) -> Localized:
    """``template`` (one str.format template per language) filled with ``params`` in each
    language; a Localized parameter is filled in its own language, any other value the same
    in every language."""
    checked = check_localized(template)
    return {
        language: checked[language].format(
            **{k: v[language] if is_localized(v) else v for k, v in params.items()})
        for language in LANGUAGES
    }


def as_code(text: str) -> Localized:
    """A value's name that is code (``"x @ w + b"``), which reads the same in every language; the
    page shows it as code (a check's texts mark code with backticks: "the `.grad` of x")."""
    return {language: f"`{text}`" for language in LANGUAGES}


def in_english(value: Any) -> Any:
    """A parameter as the English text shows it."""
    if isinstance(value, Message):
        return str(value)
    return value["en"] if is_localized(value) else value


def _plain(params: dict[str, Any]) -> dict[str, Any]:
    """Parameters as the result document holds them."""
    return {k: v.as_param() if isinstance(v, Message) else dict(v) if isinstance(v, dict) else v
            for k, v in params.items()}


def hidden(kind: str | None) -> Message:
    """The only message a performance case may show for a failure of ``kind`` that is not its measurement."""
    return Message(HIDDEN.get(kind or "", "hidden.runtime_error"))
