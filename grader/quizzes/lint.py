"""The bank lint: a question bank must not give its answers away by their shape.

Rules, per bank (each language measured on its own):

- the right choice is the strictly longest in at most a third of its single-answer questions;
- no choice of a single or multiple question is shorter than half, or longer than twice, the
  median choice length of its question, unless the question waives it with a reason
  (``waive = { choice_length = "why the lengths must differ" }``);
- between 40 % and 60 % of its true/false answers are true (a parameterised one counts as the
  share of its draws that are true);
- every single-answer question offers at least three choices;
- among its true/false statements that use an absolute word (never, always, guarantees, only, costs
  nothing…; 永远, 总是, 保证, 只…), true and false differ by at most one (per language), and
  so they do across all banks together (``lint_across``);
- no single or multiple question has its strongest absolute words (never, always, guarantees…) in
  wrong choices only;
- no answer repeats a number the question shows (its text, or a drawn parameter) in more than half
  of its draws; no single-answer question has the right choice alone repeating one;
- no single-answer question asks which choice is on one side of a contrast ("which … rather than …"):
  its right choice would be the odd one out (see ``CONTRAST_STEMS``).

``lint_bank`` returns the problems; ``bank_numbers`` the figures behind them, for reports.
"""
from __future__ import annotations

import dataclasses
import re
import statistics
import string
from collections.abc import Iterable

from grader.contract import LANGUAGES
from grader.quizzes import expressions
from grader.quizzes.loading import param_combinations
from grader.quizzes.model import Bank, Question

MAX_LONGEST_RIGHT_SHARE = 1 / 3
LENGTH_RATIO = 2.0  # a choice may be at most this many times longer (or shorter) than the median
TRUE_SHARE = (0.4, 0.6)
MIN_SINGLE_CHOICES = 3
WAIVABLE = ("choice_length",)


# --- Tells in the wording (issue 23 D) -------------------------------------------------------------
# Absolute words: test writers put them in false statements and wrong choices far more often than
# in true ones, so "never"/"always" alone lets a candidate guess. Each language is matched on its own.
ABSOLUTE_WORDS: dict[str, tuple[str, ...]] = {
    "en": (r"\bnever\b", r"\balways\b", r"\bguarantee[sd]?\b", r"\bonly\b", r"\bcosts? nothing\b",
           r"\bfor free\b", r"\bimpossible\b", r"\bonce and for all\b"),
    "zh-hans": ("永远", "从不", "从来不", "绝不", "总是", "保证", "只", "仅", "没有任何代价", "一劳永逸"),
}
# In a choice question only the strongest absolutes count: "only" and 只 name a restriction that right
# choices state as often as wrong ones.
CHOICE_ABSOLUTES = {"en": ("never", "always", "guarantee", "costs nothing", "cost nothing", "for free", "impossible",
                           "once and for all"),
                    "zh-hans": ("永远", "从不", "从来不", "绝不", "总是", "保证", "没有任何代价", "一劳永逸")}
# In true/false items: among the statements with an absolute word, true and false may differ by this
# many at most (per bank and language).
ABSOLUTE_IMBALANCE = 1
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.]*\w)")


def absolute_words(text: str, language: str) -> list[str]:
    """The absolute words in ``text`` (as written there)."""
    found: list[str] = []
    for pattern in ABSOLUTE_WORDS[language]:
        found += [m.group(0) for m in re.finditer(pattern, text, flags=re.IGNORECASE)]
    return found


def _strong_absolutes(text: str, language: str) -> list[str]:
    return [w for w in absolute_words(text, language) if w.lower().startswith(CHOICE_ABSOLUTES[language])]


def _absolute_tell(question: Question) -> list[str]:
    """A choice question whose wrong choices carry absolute words that its right choice does not."""
    right = _right_ids(question)
    absolute_words = _strong_absolutes
    found = []
    for language in LANGUAGES:
        if any(absolute_words(c.text[language], language) for c in question.choices if c.id in right):
            continue
        marked = [c.id for c in question.choices if c.id not in right and absolute_words(c.text[language], language)]
        if marked:
            words = sorted({w.lower() for c in question.choices if c.id in marked
                            for w in absolute_words(c.text[language], language)})
            found.append(f"only wrong choices use absolute words ({language}: {', '.join(words)} in "
                         f"{', '.join(marked)}); reword them, or let a right choice be absolute too")
    return found


def _right_ids(question: Question) -> set[str]:
    answer = question.answer
    if isinstance(answer, str):
        return {answer}
    if isinstance(answer, list | tuple):
        return {str(a) for a in answer}
    return set()


def _numbers(text: str) -> set[float]:
    return {float(n) for n in _NUMBER.findall(text)}


def _substituted(text: str, values: dict[str, object]) -> str:
    return string.Template(text).safe_substitute({k: str(v) for k, v in values.items()})


def _answer_number(question: Question, values: dict[str, object]) -> float | None:
    answer = expressions.evaluate(question.answer_expr, values) if question.answer_expr else question.answer
    if isinstance(answer, bool):
        return None
    try:
        return float(str(answer).strip())
    except ValueError:
        return None


def _number_echo(question: Question) -> list[str]:
    """An answer that repeats a number the question shows: in its text, or a drawn parameter.

    Numbers inside the code are not counted (shapes and constants are everywhere there), but a drawn
    parameter is, wherever it appears: it is the number the candidate sees change between attempts.
    A parameterised question is flagged when more than half of its draws echo.
    """
    draws = list(param_combinations(question))
    echoed = []
    for values in draws:
        shown = _numbers(" ".join(_substituted(question.text[lang], values) for lang in LANGUAGES))
        shown |= {float(v) for v in values.values() if isinstance(v, int | float) and not isinstance(v, bool)}
        if question.type in ("numeric", "code_output") and not question.choices:
            number = _answer_number(question, values)
            if number is not None and number in shown:
                echoed.append(values)
        elif question.type == "single" and isinstance(question.answer, str):
            for language in LANGUAGES:
                echoes = {c.id for c in question.choices if _numbers(_substituted(c.text[language], values)) & shown}
                if echoes == {question.answer}:
                    echoed.append(values)
                    break
    if echoed and len(echoed) * 2 > len(draws):
        return [f"the answer repeats a number the question shows in {len(echoed)} of {len(draws)} draw(s)"]
    return []


def _absolute_true_false(bank: Bank, language: str) -> tuple[int, int]:
    """(true, false) counts of the bank's true/false statements that use an absolute word."""
    true = false = 0
    for question in bank.questions:
        if question.type != "true_false" or question.answer_expr:
            continue
        if absolute_words(question.text[language], language):
            if question.answer is True:
                true += 1
            else:
                false += 1
    return true, false


# Odd one out: a single-answer question that asks which choice is on one side of a contrast ("which
# describes a static graph rather than a dynamic one?") has, by its form, the right choice alone on
# its side and the three distractors together on the other; the odd one out gives it away. Whether
# free-form distractors share a side is a question of meaning that no word count settles, so the lint
# enforces the part that is mechanical: a contrast is asked as a multiple-answer question, whose
# choices can sit on both sides. Review catches the rest.
CONTRAST_STEMS: dict[str, re.Pattern[str]] = {
    "en": re.compile(r"^\s*which\b.*\b(rather than|instead of|as opposed to)\b", re.IGNORECASE | re.DOTALL),
    "zh-hans": re.compile(r"哪.*(而不是|而非)|(而不是|而非).*哪", re.DOTALL),
}


def _odd_one_out(question: Question) -> list[str]:
    return [f"asks which choice is on one side of a contrast ({language}), so the right one is the odd one "
            f"out; ask it as a multiple-answer question with choices on both sides"
            for language in LANGUAGES if CONTRAST_STEMS[language].search(question.text[language])]


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
    absolute_true_false: dict[str, tuple[int, int]]  # per language: (true, false) statements with an absolute word
    absolute_tells: int  # choice questions whose absolute words sit only in wrong choices
    number_echoes: int  # questions whose answer repeats a number from the question
    odd_one_out: int  # single-answer questions asked as a one-sided contrast

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
        absolute_true_false={lang: _absolute_true_false(bank, lang) for lang in LANGUAGES},
        absolute_tells=sum(1 for q in shaped if _absolute_tell(q)),
        number_echoes=sum(1 for q in bank.questions if _number_echo(q)),
        odd_one_out=sum(1 for q in single if _odd_one_out(q)),
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
        if question.type in ("single", "multiple"):
            problems += [f"{where}: {message}" for message in _absolute_tell(question)]
        problems += [f"{where}: {message} (ask for something the question does not state)"
                     for message in _number_echo(question)]
        if question.type == "single" and not question.answer_expr:
            problems += [f"{where}: {message}" for message in _odd_one_out(question)]
        if question.type == "single" and len(question.choices) < MIN_SINGLE_CHOICES:
            problems.append(f"{where}: offers {len(question.choices)} choices; a single-answer question needs "
                            f"at least {MIN_SINGLE_CHOICES}")
    for language in LANGUAGES:
        true, false = numbers.absolute_true_false[language]
        if abs(true - false) > ABSOLUTE_IMBALANCE:
            problems.append(
                f"{label}: true/false statements with an absolute word ({language}) are {true} true and {false} "
                f"false (keep the two within {ABSOLUTE_IMBALANCE}, or the word gives the answer away)")
    low, high = TRUE_SHARE
    if numbers.true_share is not None and not low <= numbers.true_share <= high:
        problems.append(f"{label}: {numbers.true_share:.0%} of its {numbers.true_false} true/false answers are "
                        f"true (keep between {low:.0%} and {high:.0%})")
    return problems


def lint_across(banks: Iterable[Bank]) -> list[str]:
    """The rules that hold across all banks together: an interview draws from several, so one
    absolute false statement per bank adds up to a tell no single bank shows."""
    banks = list(banks)
    problems = []
    for language in LANGUAGES:
        counts = [_absolute_true_false(bank, language) for bank in banks]
        true, false = sum(t for t, _ in counts), sum(f for _, f in counts)
        if abs(true - false) > ABSOLUTE_IMBALANCE:
            problems.append(
                f"all banks: true/false statements with an absolute word ({language}) are {true} true and {false} "
                f"false (keep the two within {ABSOLUTE_IMBALANCE}, or the word gives the answer away)")
    return problems


def lint_banks(banks: Iterable[Bank]) -> dict[str, list[str]]:
    return {bank.source: lint_bank(bank) for bank in banks}


def numbers_markdown(banks: Iterable[Bank]) -> str:
    """The lint's figures per bank, as a Markdown table."""
    lines = ["| bank | single | right is longest (en / zh) | length outliers | waived | true/false | true share "
             "| absolute true/false, true:false (en / zh) | absolute only in wrong choices | answer echoes a number "
             "| one-sided contrast |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for bank in banks:
        n = bank_numbers(bank)
        share = "-" if n.true_share is None else f"{n.true_share:.0%}"
        longest = f"{n.longest_right['en']} / {n.longest_right['zh-hans']} ({n.longest_right_share('en'):.0%})"
        absolute = " / ".join(f"{t}:{f}" for t, f in (n.absolute_true_false[lang] for lang in LANGUAGES))
        lines.append(f"| {n.bank} | {n.single} | {longest} | {n.length_outliers} | {n.waived} | {n.true_false} "
                     f"| {share} | {absolute} | {n.absolute_tells} | {n.number_echoes} | {n.odd_one_out} |")
    return "\n".join(lines)
