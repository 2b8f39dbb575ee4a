"""Reading question banks, topics and interview templates from TOML, with errors that name
the file and the question.

A bank (``exercises/quizzes/<name>.toml``)::

    [bank]
    id = "autograd-pitfalls"
    title.en = "..."          title.zh-hans = "..."
    description.en = "..."    description.zh-hans = "..."
    time_limit_s = 600        # optional: the bank taken as a fixed, timed quiz

    [[question]]
    id = "ag-backward-twice"  # stable, unique across every bank
    type = "single"           # single | multiple | true_false | numeric | ordering | short_text | code_output
    difficulty = "medium"     # easy | medium | hard
    topic = "autograd"        # an id from topics.toml
    frameworks = ["pytorch"]
    pitfall = "backward-twice"            # optional
    text.en = "..."           text.zh-hans = "..."
    explanation.en = "..."    explanation.zh-hans = "..."
    reference = "https://docs.pytorch.org/..."
    code = '''...'''          # optional; literal strings keep backslashes as written
    choices = [ { id = "a", en = "...", zh-hans = "..." }, ... ]
    answer = "a"              # per type: "a" | ["a", "c"] | true | 3.5 | ["c", "a", "b"] | "text"
    tolerance = 0.01          # numeric
    accept = ["..."]  patterns = ["regex"]  reject = ["..."]   # short_text
    params = { n = { range = [2, 6] }, op = { values = ["sum", "mean"] } }
    answer_expr = "n * 2"     # the answer computed from the drawn parameters
    waive = { choice_length = "why" }     # exempt from a bank-lint rule, with the reason (lint.py)

``${name}`` in text, code, choices and explanation is replaced by the drawn value.
"""
from __future__ import annotations

import ast
import itertools
import re
import string
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from grader.content_root import DIFFICULTIES
from grader.contract import LANGUAGES
from grader.quizzes import expressions
from grader.quizzes.answers import text_matches
from grader.quizzes.model import (
    CHOICE_TYPES,
    FRAMEWORKS,
    TYPES,
    Bank,
    Choice,
    Criterion,
    Draw,
    InterviewTemplate,
    Param,
    Prompt,
    Question,
    SampleAnswer,
    Section,
    Topic,
)

ID = re.compile(r"^[a-z0-9][a-z0-9-]{1,80}$")
CJK = re.compile(r"[\u4e00-\u9fff]")
MAX_PARAM_COMBINATIONS = 10_000
TOPICS_FILE = "topics.toml"

_BANK_KEYS = {"id", "title", "description", "time_limit_s"}
_QUESTION_KEYS = {
    "id", "type", "difficulty", "topic", "frameworks", "pitfall", "text", "explanation", "reference",
    "code", "choices", "answer", "answer_expr", "tolerance", "accept", "patterns", "reject", "params",
    "shuffle", "points", "waive",
}
_TEMPLATE_KEYS = {"id", "title", "description", "duration_s", "allow_back", "section"}
_SECTION_KEYS = {"id", "title", "kind", "time_limit_s", "allow_back", "questions", "draw", "exercise", "points",
                 "prompts"}
_PROMPT_KEYS = {"id", "kind", "topic", "text", "model_answer", "rubric", "follow_up", "sample"}
MIN_SAMPLES = 3  # scored sample answers per prompt (follow-ups need none)
PROMPT_KINDS = ("design", "diagnosis")
_DRAW_KEYS = {"count", "topic", "difficulty", "has_code", "pitfall"}


class ContentError(ValueError):
    """A content file is not valid; ``problems`` lists every message, each naming file and question."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


class _Problems(list[str]):
    def add(self, where: str, message: str) -> None:
        self.append(f"{where}: {message}")


def _read_toml(path: Path, label: str) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ContentError([f"{label}: not valid TOML: {error}"]) from None
    except (OSError, UnicodeDecodeError) as error:
        raise ContentError([f"{label}: cannot be read: {error}"]) from None


def _text(value: Any, where: str, key: str, problems: _Problems, *, chinese: bool = True) -> dict[str, str]:
    """A bilingual text: both languages present, non-empty, the Chinese one in Chinese."""
    if not isinstance(value, dict):
        problems.add(where, f"{key} must be a table with en and zh-hans, got {value!r:.60}")
        return {lang: "" for lang in LANGUAGES}
    for extra in set(value) - set(LANGUAGES):
        problems.add(where, f"{key}.{extra}: unknown language (use en and zh-hans)")
    out = {}
    for lang in LANGUAGES:
        text = value.get(lang)
        if not isinstance(text, str) or not text.strip():
            problems.add(where, f"{key}.{lang} is missing or empty")
            text = ""
        elif lang == "zh-hans" and chinese and not CJK.search(text):
            problems.add(where, f"{key}.zh-hans has no Chinese in it")
        out[lang] = text.strip()
    return out


def _unknown(data: Mapping[str, Any], allowed: set[str], where: str, problems: _Problems) -> None:
    for key in sorted(set(data) - allowed):
        problems.add(where, f"unknown key {key!r} (allowed: {', '.join(sorted(allowed))})")


def _positive_int(value: Any, where: str, key: str, problems: _Problems, *, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        problems.add(where, f"{key} must be a positive whole number, got {value!r}")
        return None
    return value


def load_topics(path: Path, label: str | None = None) -> dict[str, Topic]:
    """``topics.toml``: the topic vocabulary, with what to study for each."""
    label = label or path.name
    data = _read_toml(path, label)
    problems = _Problems()
    topics: dict[str, Topic] = {}
    _unknown(data, {"topic"}, label, problems)
    for index, entry in enumerate(data.get("topic", [])):
        where = f'{label}: topic "{entry.get("id", index)}"'
        _unknown(entry, {"id", "name", "study", "links"}, where, problems)
        topic_id = entry.get("id")
        if not isinstance(topic_id, str) or not ID.match(topic_id):
            problems.add(where, "id must be lowercase letters, digits and dashes")
            continue
        if topic_id in topics:
            problems.add(where, "this id is used twice")
        links = entry.get("links", [])
        if not isinstance(links, list) or not all(isinstance(u, str) and u.startswith("https://") for u in links):
            problems.add(where, "links must be a list of https:// addresses")
            links = []
        topics[topic_id] = Topic(
            topic_id, _text(entry.get("name"), where, "name", problems),
            _text(entry.get("study"), where, "study", problems), tuple(links))
    if not topics and not problems:
        problems.add(label, "declares no [[topic]]")
    if problems:
        raise ContentError(problems)
    return topics


def load_bank(path: Path, topics: Mapping[str, Topic], label: str | None = None) -> Bank:
    """Load one bank; raise ContentError listing every problem, each naming the question."""
    label = label or path.name
    data = _read_toml(path, label)
    problems = _Problems()
    _unknown(data, {"bank", "question"}, label, problems)
    header = data.get("bank")
    if not isinstance(header, dict):
        raise ContentError([f"{label}: the [bank] table is missing"])
    _unknown(header, _BANK_KEYS, f"{label}: [bank]", problems)
    bank_id = header.get("id")
    if not isinstance(bank_id, str) or not ID.match(bank_id):
        problems.add(f"{label}: [bank]", f"id must be lowercase letters, digits and dashes, got {bank_id!r}")
        bank_id = path.stem
    title = _text(header.get("title"), f"{label}: [bank]", "title", problems)
    description = _text(header.get("description"), f"{label}: [bank]", "description", problems)
    time_limit = _positive_int(header.get("time_limit_s"), f"{label}: [bank]", "time_limit_s", problems, optional=True)
    entries = data.get("question", [])
    if not isinstance(entries, list) or not entries:
        problems.add(label, "declares no [[question]]")
        entries = []
    questions, seen = [], set()
    for index, entry in enumerate(entries):
        question_id = entry.get("id") if isinstance(entry, dict) else None
        named = isinstance(question_id, str)
        where = f'{label}: question "{question_id}"' if named else f"{label}: question #{index + 1}"
        if question_id in seen:
            problems.add(where, "this id is used twice in the bank")
        seen.add(question_id)
        question = _question(entry, bank_id, topics, where, problems)
        if question is not None:
            questions.append(question)
    if problems:
        raise ContentError(problems)
    return Bank(bank_id, label, title, description, time_limit, tuple(questions))


def _question(
    entry: Any, bank_id: str, topics: Mapping[str, Topic], where: str, problems: _Problems
) -> Question | None:
    if not isinstance(entry, dict):
        problems.add(where, "must be a table")
        return None
    before = len(problems)
    _unknown(entry, _QUESTION_KEYS, where, problems)
    question_id = entry.get("id")
    if not isinstance(question_id, str) or not ID.match(question_id):
        problems.add(where, "id must be lowercase letters, digits and dashes (2 to 81 of them)")
    kind = entry.get("type")
    if kind not in TYPES:
        problems.add(where, f"type must be one of {', '.join(TYPES)}, got {kind!r}")
        return None
    difficulty = entry.get("difficulty")
    if difficulty not in DIFFICULTIES:
        problems.add(where, f"difficulty must be one of {', '.join(DIFFICULTIES)}, got {difficulty!r}")
    topic = entry.get("topic")
    if topic not in topics:
        problems.add(where, f"topic {topic!r} is not in {TOPICS_FILE} ({', '.join(sorted(topics))})")
    frameworks = entry.get("frameworks", [])
    if not isinstance(frameworks, list) or not frameworks or any(f not in FRAMEWORKS for f in frameworks):
        problems.add(
            where, f"frameworks must be a non-empty list drawn from {', '.join(FRAMEWORKS)}, got {frameworks!r}"
        )
        frameworks = []
    pitfall = entry.get("pitfall", "")
    if pitfall and (not isinstance(pitfall, str) or not ID.match(pitfall)):
        problems.add(where, f'pitfall must be a short id like "graph-break", got {pitfall!r}')
    reference = entry.get("reference")
    if not isinstance(reference, str) or not reference.startswith("https://"):
        problems.add(where, "reference must be the https:// address of the documentation the answer rests on")
    code = entry.get("code", "")
    if not isinstance(code, str):
        problems.add(where, "code must be a string")
        code = ""
    points = _positive_int(entry.get("points", 1), where, "points", problems) or 1
    shuffle = entry.get("shuffle", True)
    if not isinstance(shuffle, bool):
        problems.add(where, "shuffle must be true or false")
    params = _params(entry.get("params", {}), where, problems)
    for key in ("accept", "patterns", "reject"):
        value = entry.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            problems.add(where, f"{key} must be a list of non-empty strings")
            entry = {**entry, key: []}
        elif value and kind != "short_text":
            problems.add(where, f"{key} belongs to short_text questions only")
    if "tolerance" in entry and kind != "numeric":
        problems.add(where, "tolerance belongs to numeric questions only")
    choices = _choices(entry.get("choices"), kind, where, problems)
    waivers = entry.get("waive", {})
    if not isinstance(waivers, dict) or not all(isinstance(v, str) for v in waivers.values()):
        problems.add(where, 'waive must be a table of rule = "reason"')
        waivers = {}
    question = Question(
        id=question_id if isinstance(question_id, str) else "",
        bank=bank_id,
        type=kind,
        difficulty=difficulty if difficulty in DIFFICULTIES else "",
        topic=topic if isinstance(topic, str) else "",
        frameworks=tuple(frameworks),
        pitfall=pitfall if isinstance(pitfall, str) else "",
        text=_text(entry.get("text"), where, "text", problems),
        explanation=_text(entry.get("explanation"), where, "explanation", problems),
        reference=reference if isinstance(reference, str) else "",
        code=code.strip("\n"),
        choices=choices,
        answer=entry.get("answer"),
        answer_expr=entry.get("answer_expr", ""),
        tolerance=entry.get("tolerance", 0.0),
        accept=tuple(entry.get("accept", ())),
        patterns=tuple(entry.get("patterns", ())),
        reject=tuple(entry.get("reject", ())),
        params=params,
        shuffle=shuffle is not False,
        points=points,
        waivers=tuple(sorted(waivers.items())),
    )
    _check_code(question, where, problems)
    _check_templates(question, where, problems)
    _check_answer(question, where, problems)
    return question if len(problems) == before else None


def _choices(value: Any, kind: str, where: str, problems: _Problems) -> tuple[Choice, ...]:
    if value is None:
        if kind in CHOICE_TYPES:
            problems.add(where, f"a {kind} question needs choices")
        return ()
    if kind not in CHOICE_TYPES + ("code_output",):
        problems.add(where, f"a {kind} question takes no choices")
        return ()
    if not isinstance(value, list) or len(value) < (3 if kind == "ordering" else 2):
        problems.add(where, f"choices must list at least {3 if kind == 'ordering' else 2} entries")
        return ()
    choices, ids = [], set()
    for index, raw in enumerate(value):
        here = f"{where}: choices[{index}]"
        if not isinstance(raw, dict):
            problems.add(here, "must be { id = ..., en = ..., zh-hans = ... }")
            continue
        _unknown(raw, {"id", *LANGUAGES}, here, problems)
        choice_id = raw.get("id")
        if not isinstance(choice_id, str) or not re.fullmatch(r"[a-z0-9_-]{1,20}", choice_id):
            problems.add(here, f"id must be a short lowercase id, got {choice_id!r}")
            continue
        if choice_id in ids:
            problems.add(here, f"id {choice_id!r} is used twice")
        ids.add(choice_id)
        # Choices may be code or numbers, the same in both languages: no Chinese required.
        text = _text({k: v for k, v in raw.items() if k in LANGUAGES}, here, "text", problems, chinese=False)
        choices.append(Choice(choice_id, text))
    return tuple(choices)


def _params(value: Any, where: str, problems: _Problems) -> tuple[Param, ...]:
    if not isinstance(value, dict):
        problems.add(where, "params must be a table of name = { range = [lo, hi] } or { values = [...] }")
        return ()
    params = []
    for name, spec in value.items():
        here = f"{where}: params.{name}"
        if not name.isidentifier() or name in expressions.FUNCTIONS:
            problems.add(here, "a parameter name must be a Python identifier that is not a function name")
            continue
        if not isinstance(spec, dict) or len(spec) != 1 or not ({"range", "values"} & set(spec)):
            problems.add(here, "must be { range = [lo, hi] } or { values = [...] }")
            continue
        if "range" in spec:
            bounds = spec["range"]
            if (
                not isinstance(bounds, list)
                or len(bounds) != 2
                or not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds)
                or bounds[0] > bounds[1]
            ):
                problems.add(here, f"range must be [lo, hi], two whole numbers with lo <= hi, got {bounds!r}")
                continue
            values = tuple(range(bounds[0], bounds[1] + 1))
        else:
            values = spec["values"]
            if not isinstance(values, list) or len(values) < 2 or len(set(map(repr, values))) != len(values):
                problems.add(here, "values must list at least two distinct values")
                continue
            values = tuple(values)
        params.append(Param(name, values))
    combinations = 1
    for param in params:
        combinations *= len(param.values)
    if combinations > MAX_PARAM_COMBINATIONS:
        problems.add(where, f"params allow {combinations} combinations; keep it under {MAX_PARAM_COMBINATIONS}")
    return tuple(params)


def param_combinations(question: Question) -> Iterable[dict[str, Any]]:
    """Every assignment of the question's parameters (one empty assignment when it has none)."""
    names = [p.name for p in question.params]
    for values in itertools.product(*(p.values for p in question.params)):
        yield dict(zip(names, values, strict=True))


def template_fields(question: Question) -> list[tuple[str, str]]:
    """(label, text) of every field in which ``${name}`` stands for a parameter."""
    fields = [(f"text.{lang}", question.text[lang]) for lang in LANGUAGES]
    fields += [(f"explanation.{lang}", question.explanation[lang]) for lang in LANGUAGES]
    fields.append(("code", question.code))
    for choice in question.choices:
        fields += [(f"choices.{choice.id}.{lang}", choice.text[lang]) for lang in LANGUAGES]
    return fields


def _check_templates(question: Question, where: str, problems: _Problems) -> None:
    if not question.params:
        return
    declared = {p.name for p in question.params}
    for label, text in template_fields(question):
        template = string.Template(text)
        if not template.is_valid():
            problems.add(where, f"{label}: a lone $ (write $$ for a dollar sign)")
            continue
        for name in set(template.get_identifiers()) - declared:
            problems.add(where, f"{label}: ${{{name}}} is not a declared parameter")


def _check_code(question: Question, where: str, problems: _Problems) -> None:
    if question.type == "code_output" and not question.code:
        problems.add(where, "a code_output question needs code")
    if not question.code:
        return
    source = question.code
    if question.params:  # parse the code as the student will see it
        source = string.Template(source).safe_substitute({p.name: p.values[0] for p in question.params})
    try:
        ast.parse(source)
    except SyntaxError as error:
        problems.add(where, f"code line {error.lineno}: {error.msg}")


def _check_answer(question: Question, where: str, problems: _Problems) -> None:
    kind, answer, ids = question.type, question.answer, [c.id for c in question.choices]
    if question.answer_expr:
        if answer is not None:
            problems.add(where, "give answer or answer_expr, not both")
            return
        if not question.params:
            problems.add(where, "answer_expr needs params (write a plain answer otherwise)")
            return
        if kind not in ("numeric", "true_false", "short_text", "code_output", "single"):
            problems.add(where, f"a {kind} question cannot compute its answer")
            return
        try:
            unknown = expressions.names(question.answer_expr) - {p.name for p in question.params}
        except expressions.ExpressionError as error:
            problems.add(where, f"answer_expr: {error}")
            return
        if unknown:
            problems.add(where, f"answer_expr reads undeclared parameters: {', '.join(sorted(unknown))}")
            return
        for variables in param_combinations(question):
            try:
                value = expressions.evaluate(question.answer_expr, variables)
            except expressions.ExpressionError as error:
                problems.add(where, f"answer_expr fails for {variables}: {error}")
                return
            message = _answer_problem(question, value, ids)
            if message:
                problems.add(where, f"answer_expr gives {value!r} for {variables}: {message}")
                return
        return
    if answer is None:
        problems.add(where, "answer is missing")
        return
    message = _answer_problem(question, answer, ids)
    if message:
        problems.add(where, message)


def _answer_problem(question: Question, answer: Any, ids: list[str]) -> str:
    """What is wrong with ``answer`` for this question, or ""."""
    kind = question.type
    if kind == "single":
        return "" if answer in ids else f"answer must be one of the choice ids {ids}, got {answer!r}"
    if kind == "multiple":
        if not isinstance(answer, list) or not answer or len(set(answer)) != len(answer) or not set(answer) <= set(ids):
            return f"answer must list distinct choice ids among {ids}, got {answer!r}"
        return ""
    if kind == "ordering":
        if not isinstance(answer, list) or sorted(answer) != sorted(ids):
            return f"answer must list every choice id once, in the right order, got {answer!r}"
        return ""
    if kind == "true_false":
        return "" if isinstance(answer, bool) else f"answer must be true or false, got {answer!r}"
    if kind == "numeric":
        if isinstance(answer, bool) or not isinstance(answer, (int, float)):
            return f"answer must be a number, got {answer!r}"
        tolerance = question.tolerance
        if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or tolerance < 0:
            return f"tolerance must be a number >= 0, got {tolerance!r}"
        return ""
    if kind == "short_text":
        if not isinstance(answer, str) or not answer.strip():
            return "answer must be the model answer, a non-empty string"
        for pattern in question.patterns:
            try:
                re.compile(pattern)
            except re.error as error:
                return f"pattern {pattern!r} does not compile: {error}"
        for good in (answer, *question.accept):
            if not text_matches(good, (answer, *question.accept), question.patterns):
                return f"accepted answer {good!r} is not accepted"
        for bad in question.reject:
            if text_matches(bad, (answer, *question.accept), question.patterns):
                return f"{bad!r} is listed under reject, yet it is accepted"
        return ""
    if kind == "code_output":
        if question.choices:
            if question.params:
                return "a code_output question with choices cannot have params"
            return "" if answer in ids else f"answer must be the id of the choice holding the output, got {answer!r}"
        return "" if isinstance(answer, str) else f"answer must be the printed output as a string, got {answer!r}"
    return f"unknown type {kind!r}"


def load_template(
    path: Path,
    questions: Mapping[str, Question],
    topics: Mapping[str, Topic],
    coding_slugs: Iterable[str],
    label: str | None = None,
    prompts: Mapping[str, Prompt] | None = None,
) -> InterviewTemplate:
    """Load one interview template and check it against the banks and the coding exercises."""
    label = label or path.name
    data = _read_toml(path, label)
    problems = _Problems()
    _unknown(data, _TEMPLATE_KEYS, label, problems)
    template_id = data.get("id")
    if not isinstance(template_id, str) or not ID.match(template_id):
        problems.add(label, f"id must be lowercase letters, digits and dashes, got {template_id!r}")
        template_id = path.stem
    title = _text(data.get("title"), label, "title", problems)
    description = _text(data.get("description"), label, "description", problems)
    duration = _positive_int(data.get("duration_s"), label, "duration_s", problems) or 0
    allow_back = data.get("allow_back", False)
    if not isinstance(allow_back, bool):
        problems.add(label, "allow_back must be true or false")
        allow_back = False
    coding_slugs = set(coding_slugs)
    sections, used, ids = [], set(), set()
    raw_sections = data.get("section", [])
    if not isinstance(raw_sections, list) or not raw_sections:
        problems.add(label, "declares no [[section]]")
        raw_sections = []
    for index, raw in enumerate(raw_sections):
        where = f'{label}: section "{raw.get("id", index + 1)}"'
        _unknown(raw, _SECTION_KEYS, where, problems)
        section_id = raw.get("id")
        if not isinstance(section_id, str) or not ID.match(section_id) or section_id in ids:
            problems.add(where, "id must be a unique lowercase id")
        ids.add(section_id)
        kind = raw.get("kind", "questions")
        limit = _positive_int(raw.get("time_limit_s"), where, "time_limit_s", problems) or 0
        section_back = raw.get("allow_back", allow_back)
        if not isinstance(section_back, bool):
            problems.add(where, "allow_back must be true or false")
            section_back = False
        section_title = _text(raw.get("title"), where, "title", problems)
        if kind == "coding":
            slug = raw.get("exercise")
            if slug not in coding_slugs:
                problems.add(where, f"exercise {slug!r} is not a folder of exercises/coding/")
            points = _positive_int(raw.get("points", 5), where, "points", problems) or 5
            if raw.get("questions") or raw.get("draw"):
                problems.add(where, "a coding section holds its exercise only")
            sections.append(
                Section(
                    section_id or "", section_title, "coding", limit, section_back, exercise=slug or "", points=points
                )
            )
            continue
        if kind == "open":
            wanted = raw.get("prompts", [])
            if not isinstance(wanted, list) or not wanted or raw.get("questions") or raw.get("draw"):
                problems.add(
                    where, "an open section lists prompts = [...] (ids from interviews/prompts.toml) and nothing else"
                )
                wanted = []
            chosen = []
            for prompt_id in wanted:
                if prompts is None or prompt_id not in prompts:
                    problems.add(where, f"prompt {prompt_id!r} is not in interviews/prompts.toml")
                else:
                    chosen.append(prompts[prompt_id])
            sections.append(
                Section(section_id or "", section_title, "open", limit, section_back, prompts=tuple(chosen))
            )
            continue
        if kind != "questions":
            problems.add(where, f'kind must be "questions", "coding" or "open", got {kind!r}')
            continue
        fixed = raw.get("questions", [])
        if not isinstance(fixed, list):
            problems.add(where, "questions must be a list of question ids")
            fixed = []
        for question_id in fixed:
            if question_id not in questions:
                problems.add(where, f"question {question_id!r} is in no bank")
            elif question_id in used:
                problems.add(where, f"question {question_id!r} appears twice in the template")
            used.add(question_id)
        draws = []
        for number, spec in enumerate(raw.get("draw", [])):
            draw = _draw(spec, topics, f"{where}: draw[{number}]", problems)
            if draw:
                draws.append(draw)
        if not fixed and not draws:
            problems.add(where, "holds no questions (give questions = [...] or draw = [...])")
        sections.append(
            Section(
                section_id or "",
                section_title,
                "questions",
                limit,
                section_back,
                questions=tuple(fixed),
                draws=tuple(draws),
            )
        )
    total = sum(s.time_limit_s for s in sections)
    if duration and total > duration:
        problems.add(label, f"the sections last {total} s together, longer than duration_s = {duration}")
    # Every draw must be satisfiable whatever the earlier draws took.
    available = [q for q_id, q in questions.items() if q_id not in used]
    for section in sections:
        for draw in section.draws:
            matching = [q for q in available if draw.matches(q)]
            if len(matching) < draw.count:
                problems.add(
                    f'{label}: section "{section.id}"',
                    f"a draw asks for {draw.count} questions but only {len(matching)} match",
                )
            available = [q for q in available if q not in matching[: draw.count]]
    if problems:
        raise ContentError(problems)
    return InterviewTemplate(template_id, label, title, description, duration, allow_back, tuple(sections))


def _draw(spec: Any, topics: Mapping[str, Topic], where: str, problems: _Problems) -> Draw | None:
    if not isinstance(spec, dict):
        problems.add(where, "must be { count = n, topic = ..., difficulty = [...], has_code = true, pitfall = true }")
        return None
    _unknown(spec, _DRAW_KEYS, where, problems)
    count = _positive_int(spec.get("count"), where, "count", problems)
    topic = spec.get("topic", "")
    if topic and topic not in topics:
        problems.add(where, f"topic {topic!r} is not in {TOPICS_FILE}")
    difficulty = spec.get("difficulty", [])
    if isinstance(difficulty, str):
        difficulty = [difficulty]
    if not isinstance(difficulty, list) or any(d not in DIFFICULTIES for d in difficulty):
        problems.add(where, f"difficulty must list some of {', '.join(DIFFICULTIES)}")
        difficulty = []
    flags = {}
    for flag in ("has_code", "pitfall"):
        value = spec.get(flag)
        if value is not None and not isinstance(value, bool):
            problems.add(where, f"{flag} must be true or false")
            value = None
        flags[flag] = value
    if not count:
        return None
    return Draw(count, topic, tuple(difficulty), flags["has_code"], flags["pitfall"])


def load_prompts(path: Path, topics: Mapping[str, Topic], label: str | None = None) -> dict[str, Prompt]:
    """``interviews/prompts.toml``: the open-ended interview items, each with a model answer,
    a rubric the candidate scores against, and follow-up questions::

        [[prompt]]
        id = "compiled-slower-than-eager"
        kind = "diagnosis"                 # design | diagnosis
        topic = "performance"
        text.en = "..."            text.zh-hans = "..."
        model_answer.en = "..."    model_answer.zh-hans = "..."
        rubric = [ { id = "warm-up", points = 2, en = "...", zh-hans = "..." }, ... ]

        [[prompt.follow_up]]               # asked right after, each with its own model answer and rubric
        id = "..."
        text.en = "..."  ...  rubric = [ ... ]

        [[prompt.sample]]                  # at least three, scoring differently: answers of known worth
        text.en = "..."            text.zh-hans = "..."
        covers = ["warm-up"]               # the rubric lines it meets; its score is their points
    """
    label = label or path.name
    data = _read_toml(path, label)
    problems = _Problems()
    _unknown(data, {"prompt"}, label, problems)
    found: dict[str, Prompt] = {}
    for index, raw in enumerate(data.get("prompt", [])):
        prompt = _prompt(raw, topics, f'{label}: prompt "{raw.get("id", index + 1)}"', problems, follow_up=False)
        if prompt is None:
            continue
        if prompt.id in found:
            problems.add(f'{label}: prompt "{prompt.id}"', "this id is used twice")
        found[prompt.id] = prompt
    if not found and not problems:
        problems.add(label, "declares no [[prompt]]")
    if problems:
        raise ContentError(problems)
    return found


def _prompt(
    raw: Any,
    topics: Mapping[str, Topic],
    where: str,
    problems: _Problems,
    *,
    follow_up: bool,
) -> Prompt | None:
    if not isinstance(raw, dict):
        problems.add(where, "must be a table")
        return None
    before = len(problems)
    _unknown(raw, _PROMPT_KEYS - ({"kind", "topic", "follow_up", "sample"} if follow_up else set()), where, problems)
    prompt_id = raw.get("id")
    if not isinstance(prompt_id, str) or not ID.match(prompt_id):
        problems.add(where, "id must be lowercase letters, digits and dashes")
    kind = "follow-up" if follow_up else raw.get("kind")
    if not follow_up and kind not in PROMPT_KINDS:
        problems.add(where, f"kind must be one of {', '.join(PROMPT_KINDS)}, got {kind!r}")
    topic = raw.get("topic", "")
    if not follow_up and topic not in topics:
        problems.add(where, f"topic {topic!r} is not in {TOPICS_FILE}")
    text = _text(raw.get("text"), where, "text", problems)
    model_answer = _text(raw.get("model_answer"), where, "model_answer", problems)
    rubric, ids = [], set()
    raw_rubric = raw.get("rubric")
    if not isinstance(raw_rubric, list) or not raw_rubric:
        problems.add(where, "rubric must list what a good answer covers: [ { id, points, en, zh-hans }, ... ]")
        raw_rubric = []
    for number, line in enumerate(raw_rubric):
        here = f"{where}: rubric[{number}]"
        if not isinstance(line, dict):
            problems.add(here, "must be { id = ..., points = n, en = ..., zh-hans = ... }")
            continue
        _unknown(line, {"id", "points", *LANGUAGES}, here, problems)
        line_id = line.get("id")
        if not isinstance(line_id, str) or not ID.match(line_id) or line_id in ids:
            problems.add(here, "id must be a unique lowercase id")
            continue
        ids.add(line_id)
        points = _positive_int(line.get("points"), here, "points", problems) or 1
        rubric.append(
            Criterion(line_id, points, _text({k: v for k, v in line.items() if k in LANGUAGES}, here, "text", problems))
        )
    follow_ups = []
    raw_follow_ups = raw.get("follow_up", [])
    if not isinstance(raw_follow_ups, list):
        problems.add(where, "follow_up must be [[prompt.follow_up]] tables")
        raw_follow_ups = []
    for number, entry in enumerate(raw_follow_ups):
        inner = _prompt(entry, topics, f"{where}: follow_up[{number}]", problems, follow_up=True)
        if inner is not None:
            follow_ups.append(Prompt(inner.id, "follow-up", topic, inner.text, inner.model_answer, inner.rubric))
    if len({f.id for f in follow_ups}) != len(follow_ups):
        problems.add(where, "two follow-ups share an id")
    if len(problems) != before or not isinstance(prompt_id, str) or not isinstance(kind, str):
        return None
    samples = () if follow_up else _samples(raw.get("sample", []), rubric, where, problems)
    return Prompt(prompt_id, kind, topic, text, model_answer, tuple(rubric), tuple(follow_ups), samples)


def _samples(raw: Any, rubric: list[Criterion], where: str, problems: _Problems) -> tuple[SampleAnswer, ...]:
    """[[prompt.sample]]: scored sample answers; their scores must differ, so that they show the scale."""
    if not isinstance(raw, list):
        problems.add(where, "sample must be [[prompt.sample]] tables")
        return ()
    points = {c.id: c.points for c in rubric}
    samples, scores = [], []
    for number, entry in enumerate(raw):
        here = f"{where}: sample[{number}]"
        if not isinstance(entry, dict):
            problems.add(here, "must be a table with text and covers")
            continue
        _unknown(entry, {"text", "covers"}, here, problems)
        text = _text(entry.get("text"), here, "text", problems)
        covers = entry.get("covers")
        if not isinstance(covers, list) or not all(isinstance(c, str) for c in covers):
            problems.add(here, "covers must list rubric line ids (an empty list for an answer that meets none)")
            continue
        unknown = [c for c in covers if c not in points]
        if unknown:
            problems.add(here, f"covers names {', '.join(unknown)}, not a line of this prompt's rubric")
        if len(set(covers)) != len(covers):
            problems.add(here, "covers names a rubric line twice")
        samples.append(SampleAnswer(text, tuple(covers)))
        scores.append(sum(points.get(c, 0) for c in set(covers)))
    if len(samples) < MIN_SAMPLES:
        problems.add(where, f"needs at least {MIN_SAMPLES} scored sample answers ([[prompt.sample]]), "
                            f"has {len(samples)}")
    elif len(set(scores)) != len(scores):
        problems.add(where, f"its sample answers score {', '.join(map(str, scores))}: give each a different score, "
                            "so that together they show the scale")
    return tuple(samples)
