"""The quiz content of an ``exercises/`` folder as a whole: load it, validate it, plan interviews."""
from __future__ import annotations

import collections
import dataclasses
import random
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from pathlib import Path

from grader import glossary
from grader.content_root import exercise_folders
from grader.quizzes import lint, proof
from grader.quizzes.loading import TOPICS_FILE, ContentError, load_bank, load_prompts, load_template, load_topics
from grader.quizzes.model import TYPES, Bank, InterviewTemplate, PlannedItem, Prompt, Question, Section, Topic
from sandbox import Sandbox

PROMPTS_FILE = "prompts.toml"


@dataclasses.dataclass
class Content:
    topics: dict[str, Topic]
    banks: list[Bank]
    templates: list[InterviewTemplate]
    prompts: dict[str, Prompt]
    # Problems by file, relative to the content folder ("quizzes/autograd.toml"); every
    # file read has an entry, empty when the file is valid.
    problems: dict[str, list[str]]

    @property
    def questions(self) -> dict[str, Question]:
        return {q.id: q for bank in self.banks for q in bank.questions}


def load_content(content_dir: Path) -> Content:
    """Read topics, banks and templates; a broken file is reported and left out, never raised."""
    content_dir = Path(content_dir)
    problems: dict[str, list[str]] = {}
    topics: dict[str, Topic] = {}
    quizzes_dir, interviews_dir = content_dir / "quizzes", content_dir / "interviews"
    topics_label = f"quizzes/{TOPICS_FILE}"
    if (quizzes_dir / TOPICS_FILE).is_file():
        try:
            topics = load_topics(quizzes_dir / TOPICS_FILE, topics_label)
            problems[topics_label] = []
        except ContentError as error:
            problems[topics_label] = error.problems
    elif any(quizzes_dir.glob("*.toml")):
        problems[topics_label] = [f"{topics_label}: missing; every bank's topics come from it"]
    banks: list[Bank] = []
    owner: dict[str, str] = {}
    for path in sorted(quizzes_dir.glob("*.toml")) if quizzes_dir.is_dir() else []:
        if path.name == TOPICS_FILE:
            continue
        label = f"quizzes/{path.name}"
        try:
            bank = load_bank(path, topics, label)
        except ContentError as error:
            problems[label] = error.problems
            continue
        problems[label] = []
        for other in banks:
            if other.id == bank.id:
                problems[label].append(f"{label}: bank id {bank.id!r} is also used by {other.source}")
        for question in bank.questions:
            if question.id in owner:
                problems[label].append(
                    f'{label}: question "{question.id}": the id is also used in {owner[question.id]}'
                )
            owner.setdefault(question.id, label)
        if not problems[label]:
            banks.append(bank)
    content = Content(topics, banks, [], {}, problems)
    prompts_label = f"interviews/{PROMPTS_FILE}"
    if (interviews_dir / PROMPTS_FILE).is_file():
        try:
            content.prompts = load_prompts(interviews_dir / PROMPTS_FILE, topics, prompts_label)
            problems[prompts_label] = []
        except ContentError as error:
            problems[prompts_label] = error.problems
    questions, slugs = content.questions, [folder.name for folder in exercise_folders(content_dir)]
    for path in sorted(interviews_dir.glob("*.toml")) if interviews_dir.is_dir() else []:
        if path.name == PROMPTS_FILE:
            continue
        label = f"interviews/{path.name}"
        try:
            template = load_template(path, questions, topics, slugs, label, content.prompts)
        except ContentError as error:
            problems[label] = error.problems
            continue
        problems[label] = []
        if any(t.id == template.id for t in content.templates):
            problems[label].append(f"{label}: template id {template.id!r} is used twice")
            continue
        content.templates.append(template)
    return content


def validate_all(
    content_dir: Path, sandbox: Sandbox | None, *, executor: Executor | None = None, runs: int = 1
) -> dict[str, list[str]]:
    """Problems by content file (empty lists when valid), the bank lint's and the glossary's
    included (the glossary covers exercise statements too). With a sandbox, every "what does
    this print?" answer is also proven by running its snippet (in ``runs`` sandbox runs,
    through ``executor`` when given: see :func:`proof.prove`)."""
    content = load_content(Path(content_dir))
    for bank in content.banks:
        content.problems[bank.source] += lint.lint_bank(bank)
    if content.banks:
        content.problems.setdefault("quizzes", []).extend(lint.lint_across(content.banks))
    for label, messages in glossary.lint_content(Path(content_dir)).items():
        content.problems.setdefault(label, []).extend(messages)
    if sandbox is not None:
        proven = proof.prove([q for bank in content.banks for q in bank.questions], sandbox, executor=executor,
                             runs=runs)
        for bank in content.banks:
            for question in bank.questions:
                for message in proven.get(question.id, []):
                    content.problems[bank.source].append(f'{bank.source}: question "{question.id}": {message}')
    return content.problems


def plan_interview(
    template: InterviewTemplate, questions: Mapping[str, Question], seed: int | str
) -> list[PlannedItem]:
    """The steps of one interview attempt: fixed questions, then this seed's draws, per section."""
    used = {q for section in template.sections for q in section.questions}
    items: list[PlannedItem] = []
    for index, section in enumerate(template.sections):
        if section.kind == "coding":
            items.append(PlannedItem(index, "coding", section.exercise))
            continue
        if section.kind == "open":
            for prompt in section.prompts:  # each prompt, then its follow-ups, in the file's order
                items.append(PlannedItem(index, "open", prompt.id))
                items += [PlannedItem(index, "open", f"{prompt.id}/{f.id}") for f in prompt.follow_ups]
            continue
        picked = [q for q in section.questions if q in questions]
        for number, draw in enumerate(section.draws):
            pool = sorted(q.id for q in questions.values() if q.id not in used and draw.matches(q))
            rng = random.Random(f"{seed}/{template.id}/{section.id}/{number}")
            chosen = rng.sample(pool, min(draw.count, len(pool)))
            used.update(chosen)
            picked += chosen
        items += [PlannedItem(index, "question", q) for q in picked]
    return items


def prompt_for(section: Section, ref: str) -> Prompt:
    """The prompt a planned "open" item stands for: "id", or "id/follow-up-id"."""
    prompt_id, _, follow_up = ref.partition("/")
    prompt = next(p for p in section.prompts if p.id == prompt_id)
    return next(f for f in prompt.follow_ups if f.id == follow_up) if follow_up else prompt


def count_by_topic_and_type(questions: Sequence[Question]) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = collections.defaultdict(lambda: dict.fromkeys(TYPES, 0))
    for question in questions:
        table[question.topic][question.type] += 1
    return dict(sorted(table.items()))


def report_markdown(content: Content) -> str:
    """Question count by topic and type, as a Markdown table."""
    questions = list(content.questions.values())
    table = count_by_topic_and_type(questions)
    lines = ["| topic | " + " | ".join(TYPES) + " | total |", "|---" * (len(TYPES) + 2) + "|"]
    for topic, counts in table.items():
        lines.append(f"| {topic} | " + " | ".join(str(counts[t]) for t in TYPES) + f" | {sum(counts.values())} |")
    totals = [sum(table[topic][t] for topic in table) for t in TYPES]
    lines.append("| **all** | " + " | ".join(map(str, totals)) + f" | **{len(questions)}** |")
    params = sum(1 for q in questions if q.params)
    difficulty = collections.Counter(q.difficulty for q in questions)
    lines.append("")
    follow_ups = sum(len(p.follow_ups) for p in content.prompts.values())
    kinds = collections.Counter(p.kind for p in content.prompts.values())
    lines.append(
        f"{len(content.banks)} banks, {len(content.templates)} interview templates; "
        f"{params} parameterised questions; difficulty: "
        + ", ".join(f"{d} {difficulty[d]}" for d in ("easy", "medium", "hard"))
        + "; "
        f"{len(content.prompts)} open-ended interview items ("
        + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
        + f") with {follow_ups} follow-ups."
    )
    lines += ["", "Bank lint:", "", lint.numbers_markdown(content.banks)]
    return "\n".join(lines)
