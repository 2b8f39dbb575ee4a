"""The bank lint: a question bank must not give its answers away by their shape.

Rules, per bank (each language measured on its own):

- the right choice is the strictly longest in at most a third of its single-answer questions;
- no choice of a single or multiple question is shorter than half, or longer than twice, the
  median choice length of its question, unless the question waives it with a reason
  (``waive = { choice_length = "why the lengths must differ" }``);
- between 40 % and 60 % of its true/false answers are true (a parameterised one counts as the
  share of its draws that are true);
- every single-answer question offers at least three choices.

``lint_bank`` returns the problems; ``bank_numbers`` the figures behind them, for reports.
"""
from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Iterable

from grader.content_root import LANGUAGES
from grader.quizzes import expressions
from grader.quizzes.loading import param_combinations
from grader.quizzes.model import Bank, Question

MAX_LONGEST_RIGHT_SHARE = 1 / 3
LENGTH_RATIO = 2.0  # a choice may be at most this many times longer (or shorter) than the median
TRUE_SHARE = (0.4, 0.6)
MIN_SINGLE_CHOICES = 3
WAIVABLE = ("choice_length",)


@dataclasses.dataclass(frozen=True)
class BankNumbers:
    """What the lint measured on one bank."""

    bank: str
    single: int  # single-answer questions
    longest_right: dict[str, int]  # per language: single questions whose right choice is strictly longest
    length_outliers: int  # choices out of [median / 2, median * 2] (in either language), waived ones excluded
    waived: int  # questions that waive the length rule
    true_false: int
    true_share: float | None  # None when the bank has no true/false question
    too_few_choices: int

    def longest_right_share(self, language: str = "en") -> float:
        return self.longest_right[language] / self.single if self.single else 0.0


def _right_is_longest(question: Question, language: str) -> bool:
    lengths = {c.id: len(c.text[language]) for c in question.choices}
    right = lengths.pop(question.answer, 0)
    return bool(lengths) and right > max(lengths.values())


def _outliers(question: Question) -> list[str]:
    """The choices whose length is out of bounds, as readable messages."""
    found = []
    for language in LANGUAGES:
        lengths = [len(c.text[language]) for c in question.choices]
        median = statistics.median(lengths)
        for choice, length in zip(question.choices, lengths, strict=False):
            if length * LENGTH_RATIO < median or length > median * LENGTH_RATIO:
                found.append(f"choice {choice.id!r} ({language}) is {length} characters long, "
                             f"the median choice {median:g}")
    return found


def _true_share(question: Question) -> float:
    if not question.answer_expr:
        return 1.0 if question.answer is True else 0.0
    draws = [bool(expressions.evaluate(question.answer_expr, v)) for v in param_combinations(question)]
    return sum(draws) / len(draws)


def _single(bank: Bank) -> list[Question]:
    # A computed answer (answer_expr) changes with the draw; the lint judges fixed answers.
    return [q for q in bank.questions if q.type == "single" and not q.answer_expr]


def bank_numbers(bank: Bank) -> BankNumbers:
    single = _single(bank)
    shaped = [q for q in bank.questions if q.type in ("single", "multiple")]
    true_false = [q for q in bank.questions if q.type == "true_false"]
    return BankNumbers(
        bank=bank.source,
        single=len(single),
        longest_right={lang: sum(_right_is_longest(q, lang) for q in single) for lang in LANGUAGES},
        length_outliers=sum(len(_outliers(q)) for q in shaped if "choice_length" not in q.waivers_dict),
        waived=sum(1 for q in shaped if "choice_length" in q.waivers_dict),
        true_false=len(true_false),
        true_share=sum(map(_true_share, true_false)) / len(true_false) if true_false else None,
        too_few_choices=sum(1 for q in single if len(q.choices) < MIN_SINGLE_CHOICES),
    )


def lint_bank(bank: Bank) -> list[str]:
    """Every rule the bank breaks, each message naming the bank (and the question when there is one)."""
    problems: list[str] = []
    label = bank.source
    numbers = bank_numbers(bank)
    for language in LANGUAGES:
        share = numbers.longest_right_share(language)
        if share > MAX_LONGEST_RIGHT_SHARE:
            longest = [q.id for q in _single(bank) if _right_is_longest(q, language)]
            problems.append(
                f"{label}: the right choice is the longest ({language}) in {numbers.longest_right[language]} of "
                f"{numbers.single} single-answer questions ({share:.0%}; at most a third): {', '.join(longest)}")
    for question in bank.questions:
        where = f'{label}: question "{question.id}"'
        for rule, reason in question.waivers_dict.items():
            if rule not in WAIVABLE:
                problems.append(f"{where}: waive.{rule}: only {', '.join(WAIVABLE)} can be waived")
            elif not reason.strip():
                problems.append(f"{where}: waive.{rule} needs a reason")
        if question.type in ("single", "multiple") and "choice_length" not in question.waivers_dict:
            problems += [f"{where}: {message} (keep within half to twice, or waive with a reason)"
                         for message in _outliers(question)]
        if question.type == "single" and len(question.choices) < MIN_SINGLE_CHOICES:
            problems.append(f"{where}: offers {len(question.choices)} choices; a single-answer question needs "
                            f"at least {MIN_SINGLE_CHOICES}")
    low, high = TRUE_SHARE
    if numbers.true_share is not None and not low <= numbers.true_share <= high:
        problems.append(f"{label}: {numbers.true_share:.0%} of its {numbers.true_false} true/false answers are "
                        f"true (keep between {low:.0%} and {high:.0%})")
    return problems


def lint_banks(banks: Iterable[Bank]) -> dict[str, list[str]]:
    return {bank.source: lint_bank(bank) for bank in banks}


def numbers_markdown(banks: Iterable[Bank]) -> str:
    """The lint's figures per bank, as a Markdown table."""
    lines = ["| bank | single | right is longest (en / zh) | length outliers | waived | true/false | true share |",
             "|---|---|---|---|---|---|---|"]
    for bank in banks:
        n = bank_numbers(bank)
        share = "-" if n.true_share is None else f"{n.true_share:.0%}"
        longest = f"{n.longest_right['en']} / {n.longest_right['zh-hans']} ({n.longest_right_share('en'):.0%})"
        lines.append(f"| {n.bank} | {n.single} | {longest} | {n.length_outliers} | {n.waived} | {n.true_false} "
                     f"| {share} |")
    return "\n".join(lines)
