"""What a question bank, a topic and an interview template are, once loaded from TOML."""
from __future__ import annotations

import dataclasses
from typing import Any

TYPES = ("single", "multiple", "true_false", "numeric", "ordering", "short_text", "code_output")
FRAMEWORKS = ("general", "pytorch", "tensorflow1", "tensorflow2", "jax", "xla")
# Types whose answer is picked among choices (code_output may offer them too).
CHOICE_TYPES = ("single", "multiple", "ordering")

Text = dict[str, str]  # {"en": ..., "zh-hans": ...}


@dataclasses.dataclass(frozen=True)
class Choice:
    id: str
    text: Text


@dataclasses.dataclass(frozen=True)
class Param:
    name: str
    values: tuple[Any, ...]  # every value the parameter may take


@dataclasses.dataclass(frozen=True)
class Question:
    id: str
    bank: str
    type: str
    difficulty: str
    topic: str
    frameworks: tuple[str, ...]
    pitfall: str  # "" when the question is not about a pitfall
    text: Text
    explanation: Text
    reference: str
    code: str = ""
    choices: tuple[Choice, ...] = ()
    answer: Any = None  # None when answer_expr computes it
    answer_expr: str = ""
    tolerance: float = 0.0
    accept: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    reject: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()
    shuffle: bool = True
    points: int = 1
    # (rule, reason) pairs: lint rules this question is exempt from, and why (see lint.py)
    waivers: tuple[tuple[str, str], ...] = ()

    @property
    def waivers_dict(self) -> dict[str, str]:
        return dict(self.waivers)

    @property
    def has_code(self) -> bool:
        return bool(self.code)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form (the database keeps it); ``from_dict`` reverses it."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Question:
        fields = dict(data)
        fields["frameworks"] = tuple(fields.get("frameworks", ()))
        fields["choices"] = tuple(Choice(c["id"], dict(c["text"])) for c in fields.get("choices", ()))
        fields["params"] = tuple(Param(p["name"], tuple(p["values"])) for p in fields.get("params", ()))
        for name in ("accept", "patterns", "reject"):
            fields[name] = tuple(fields.get(name, ()))
        fields["waivers"] = tuple(tuple(pair) for pair in fields.get("waivers", ()))
        return cls(**fields)


@dataclasses.dataclass(frozen=True)
class Bank:
    id: str
    source: str
    title: Text
    description: Text
    time_limit_s: int | None
    questions: tuple[Question, ...]


@dataclasses.dataclass(frozen=True)
class Topic:
    id: str
    name: Text
    study: Text
    links: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Draw:
    """Pick ``count`` questions at random (per attempt) among those that match."""
    count: int
    topic: str = ""
    difficulty: tuple[str, ...] = ()
    has_code: bool | None = None
    pitfall: bool | None = None

    def matches(self, question: Question) -> bool:
        return (
            (not self.topic or question.topic == self.topic)
            and (not self.difficulty or question.difficulty in self.difficulty)
            and (self.has_code is None or question.has_code == self.has_code)
            and (self.pitfall is None or bool(question.pitfall) == self.pitfall)
        )


@dataclasses.dataclass(frozen=True)
class Criterion:
    """One line of a rubric: what a good answer says, and what saying it is worth."""
    id: str
    points: int
    text: Text


@dataclasses.dataclass(frozen=True)
class SampleAnswer:
    """An answer someone might give to an open item, with the rubric lines it covers: shown after the
    interview so a candidate can calibrate their own ticks against answers of known worth."""
    text: Text
    covers: tuple[str, ...]  # rubric line ids


@dataclasses.dataclass(frozen=True)
class Prompt:
    """An open-ended interview item (design or diagnosis). Nothing grades it automatically: the
    candidate writes an answer, then reads the model answer and ticks the rubric lines it covered.
    Follow-ups are asked right after it, each an open item of its own."""
    id: str
    kind: str  # "design" | "diagnosis" | "follow-up"
    topic: str
    text: Text
    model_answer: Text
    rubric: tuple[Criterion, ...]
    follow_ups: tuple[Prompt, ...] = ()
    samples: tuple[SampleAnswer, ...] = ()

    @property
    def max_points(self) -> int:
        return sum(c.points for c in self.rubric)

    def points_of(self, sample: SampleAnswer) -> int:
        """What a sample answer scores on this prompt's rubric."""
        return sum(c.points for c in self.rubric if c.id in sample.covers)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Prompt:
        return cls(**{**data, "rubric": tuple(Criterion(**c) for c in data.get("rubric", ())),
                      "follow_ups": tuple(cls.from_dict(f) for f in data.get("follow_ups", ())),
                      "samples": tuple(SampleAnswer(dict(x["text"]), tuple(x["covers"]))
                                       for x in data.get("samples", ()))})


@dataclasses.dataclass(frozen=True)
class Section:
    id: str
    title: Text
    kind: str  # "questions" | "coding" | "open"
    time_limit_s: int
    allow_back: bool
    questions: tuple[str, ...] = ()
    draws: tuple[Draw, ...] = ()
    exercise: str = ""  # coding sections: the exercise's slug
    points: int = 0  # coding sections: what a fully accepted solution is worth
    prompts: tuple[Prompt, ...] = ()  # open sections, copied from interviews/prompts.toml


@dataclasses.dataclass(frozen=True)
class InterviewTemplate:
    id: str
    source: str
    title: Text
    description: Text
    duration_s: int
    allow_back: bool
    sections: tuple[Section, ...]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> InterviewTemplate:
        sections = []
        for raw in data["sections"]:
            draws = tuple(Draw(**{**d, "difficulty": tuple(d.get("difficulty", ()))}) for d in raw.get("draws", ()))
            prompts = tuple(Prompt.from_dict(p) for p in raw.get("prompts", ()))
            sections.append(Section(**{**raw, "questions": tuple(raw.get("questions", ())), "draws": draws,
                                       "prompts": prompts}))
        return cls(**{**data, "sections": tuple(sections)})


@dataclasses.dataclass(frozen=True)
class PlannedItem:
    """One step of an interview: a question, the coding exercise of a section, or an open prompt."""
    section: int
    kind: str  # "question" | "coding" | "open"
    ref: str  # question id, exercise slug, or prompt id (a follow-up: "prompt-id/follow-up-id")
