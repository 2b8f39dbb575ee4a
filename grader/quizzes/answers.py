"""One attempt at one question: draw its parameters, read the student's form, check the answer.

``instantiate`` turns a Question into a *snapshot*: the text with the drawn values filled
in, the choices in this attempt's order, and under ``"key"`` the right answer. The platform
stores the snapshot with the attempt and must never render ``"key"`` before the attempt ends.
"""
from __future__ import annotations

import math
import random
import re
import string
from collections.abc import Mapping, Sequence
from typing import Any

from grader.contract import LANGUAGES
from grader.quizzes import expressions
from grader.quizzes.model import Question

MAX_TEXT_ANSWER = 2000


class ResponseError(ValueError):
    """The submitted form does not fit the question (a tampered or broken form)."""


def question_rng(seed: int | str, question_id: str) -> random.Random:
    # A string seed hashes with SHA-512: the same draw on every machine and Python run.
    return random.Random(f"{seed}/{question_id}")


def draw_params(question: Question, seed: int | str) -> dict[str, Any]:
    rng = question_rng(seed, question.id)
    return {p.name: rng.choice(p.values) for p in question.params}


def _fill(text: str, params: Mapping[str, Any]) -> str:
    return string.Template(text).substitute(params) if params else text


def instantiate(question: Question, seed: int | str) -> dict[str, Any]:
    """The question as this attempt shows it, with its answer key apart under "key"."""
    rng = question_rng(seed, question.id)
    params = {p.name: rng.choice(p.values) for p in question.params}
    choices = [
        {"id": c.id, "text": {lang: _fill(c.text[lang], params) for lang in LANGUAGES}} for c in question.choices
    ]
    if question.type == "ordering":
        correct = list(question.answer)
        for _ in range(20):  # never show the items already in the right order
            rng.shuffle(choices)
            if [c["id"] for c in choices] != correct:
                break
    elif question.shuffle:
        rng.shuffle(choices)
    answer = expressions.evaluate(question.answer_expr, params) if question.answer_expr else question.answer
    if question.type == "numeric":
        answer = float(answer)
    if question.type == "code_output" and not question.choices:
        answer = normalise_output(str(answer))
    return {
        "id": question.id,
        "bank": question.bank,
        "type": question.type,
        "difficulty": question.difficulty,
        "topic": question.topic,
        "frameworks": list(question.frameworks),
        "pitfall": question.pitfall,
        "points": question.points,
        "params": params,
        "text": {lang: _fill(question.text[lang], params) for lang in LANGUAGES},
        "code": _fill(question.code, params),
        "choices": choices,
        "explanation": {lang: _fill(question.explanation[lang], params) for lang in LANGUAGES},
        "reference": question.reference,
        "key": {
            "answer": answer,
            "tolerance": float(question.tolerance or 0.0),
            "accept": [str(answer)] + list(question.accept) if question.type == "short_text" else [],
            "patterns": list(question.patterns),
        },
    }


def normalise_output(text: str) -> str:
    """Printed output as compared: spaces inside a line collapsed, blank edges dropped."""
    lines = [" ".join(line.split()) for line in text.replace("\r\n", "\n").split("\n")]
    return "\n".join(lines).strip("\n")


def normalise_text(text: str) -> str:
    return " ".join(text.split()).casefold()


def text_matches(text: str, accepted: Sequence[str], patterns: Sequence[str]) -> bool:
    """A short answer matches an accepted answer (case and spacing aside) or a pattern."""
    given = normalise_text(text)
    if any(given == normalise_text(a) for a in accepted):
        return True
    return any(re.fullmatch(p, given, re.IGNORECASE) for p in patterns)


def _one(fields: Mapping[str, Sequence[str]], name: str) -> str | None:
    values = fields.get(name) or []
    if len(values) > 1:
        raise ResponseError(f"{name} was sent {len(values)} times")
    return values[0] if values else None


def parse_response(snapshot: Mapping[str, Any], fields: Mapping[str, Sequence[str]]) -> Any:
    """The answer a form holds (``fields`` as QueryDict.lists() gives them); None when blank.

    The form is untrusted: a choice id the question does not offer, or a value of the wrong
    kind, raises ResponseError instead of being stored.
    """
    kind = snapshot["type"]
    ids = [c["id"] for c in snapshot["choices"]]
    if kind == "multiple":
        chosen = list(fields.get("answer") or [])
        if len(set(chosen)) != len(chosen) or not set(chosen) <= set(ids):
            raise ResponseError("the form names a choice this question does not have")
        return sorted(chosen) or None
    if kind == "ordering":
        ranks = {}
        for choice_id in ids:
            value = _one(fields, f"rank-{choice_id}")
            if value in (None, ""):
                return None  # not every item placed yet: nothing to save
            try:
                ranks[choice_id] = int(value)
            except ValueError:
                raise ResponseError("a position must be a whole number") from None
        if sorted(ranks.values()) != list(range(1, len(ids) + 1)):
            raise ResponseError(f"give every item a different position, from 1 to {len(ids)}")
        return sorted(ids, key=ranks.__getitem__)
    value = _one(fields, "answer")
    if value is None or not value.strip():
        return None
    if kind == "single" or (kind == "code_output" and ids):
        if value not in ids:
            raise ResponseError("the form names a choice this question does not have")
        return value
    if kind == "true_false":
        if value not in ("true", "false"):
            raise ResponseError("true or false expected")
        return value == "true"
    if kind == "numeric":
        try:
            number = float(value.strip().replace(",", "."))
        except ValueError:
            raise ResponseError("a number is expected, such as 12 or 0.5") from None
        if not math.isfinite(number):
            raise ResponseError("a finite number is expected")
        return number
    if len(value) > MAX_TEXT_ANSWER:
        raise ResponseError(f"keep the answer under {MAX_TEXT_ANSWER} characters")
    return value


def is_correct(snapshot: Mapping[str, Any], response: Any) -> bool:
    """Whether ``response`` (as parse_response returned it) is right. All or nothing."""
    if response is None:
        return False
    kind, key = snapshot["type"], snapshot["key"]
    answer = key["answer"]
    if kind == "multiple":
        return bool(sorted(response) == sorted(answer))
    if kind == "numeric":
        slack = key["tolerance"] + 1e-9 * max(1.0, abs(answer))
        return bool(abs(float(response) - answer) <= slack)
    if kind == "short_text":
        return text_matches(str(response), key["accept"], key["patterns"])
    if kind == "code_output" and not snapshot["choices"]:
        return bool(normalise_output(str(response)) == answer)
    return bool(response == answer)


def _choice_text(snapshot: Mapping[str, Any], choice_id: str, lang: str) -> str:
    for choice in snapshot["choices"]:
        if choice["id"] == choice_id:
            return str(choice["text"][lang])
    return choice_id


def display(
    snapshot: Mapping[str, Any], value: Any, lang: str, *, expected: bool = False, yes: str = "True", no: str = "False"
) -> str:
    """An answer (the key's or a response) as words for a results page."""
    if value is None:
        return ""
    kind = snapshot["type"]
    if kind in ("single", "code_output") and snapshot["choices"]:
        return _choice_text(snapshot, value, lang)
    if kind == "multiple":
        return "; ".join(_choice_text(snapshot, v, lang) for v in value)
    if kind == "ordering":
        return " → ".join(_choice_text(snapshot, v, lang) for v in value)
    if kind == "true_false":
        return yes if value else no
    if kind == "numeric":
        text = f"{value:g}"
        tolerance = snapshot["key"]["tolerance"]
        return f"{text} (± {tolerance:g})" if expected and tolerance else text
    return str(value)
