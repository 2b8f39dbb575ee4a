"""Lesson folders: ``lesson.toml`` (the front matter) beside ``en.md`` and ``zh-hans.md``.

    id = "define-then-run"            # the folder's name
    order = 2                         # place on the learning path
    title.en = "..."   title.zh-hans = "..."
    summary.en = "..." summary.zh-hans = "..."
    covers = ["static-mechanism"]     # keys of ARTICLE_SECTIONS this lesson teaches
    prerequisites = ["computation-graphs"]
    exercises = ["static-graph-executor"]      # exercises/coding/<slug>
    quiz = ["gb-tf1-placeholder", ...]         # question ids: the lesson's short quiz
    topics = ["static-execution"]              # topics.toml ids (interview topics)
    interviews = ["ml-systems-screen-30"]      # interview template ids

In the markdown, a fenced block whose info string is ``python run`` is runnable; a fenced
``output`` block right after it is what it must print (proven in the sandbox by
:func:`validate_lessons`). A line ``::: viz NAME`` places one of the VISUALISATIONS (its data,
if any, in ``NAME.toml`` beside the lesson); ``::: questions ID ...`` lists the quiz questions
that test what the page just explained. Links
to ``/lessons/<slug>/``, ``/exercises/<slug>/`` and ``/quizzes/`` must resolve.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import tomllib
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

from grader.content_root import exercise_folders
from grader.contract import LANGUAGES
from grader.playground import RunResult, run_program
from grader.quizzes.library import load_content

LESSON_FILE = "lesson.toml"

#: every section of the seed article (its headings, in order), so no section goes untaught
ARTICLE_SECTIONS = {
    "visualisations": "可视化演示",
    "design-philosophy": "设计理念：两套施工哲学",
    "static-mechanism": "静态图机制：先画图纸再施工",
    "dynamic-mechanism": "动态图机制：边做边画图",
    "performance": "性能对比：效率的代价",
    "debugging": "调试体验：发现问题早晚",
    "frameworks": "框架阵营：深度学习三国",
    "hybrid": "混合模式：图纸与即兴的联姻",
    "selection-guide": "选型指南：按需求定方案",
    "python-demo": "Python 演示",
    "pitfalls": "常见误区",
    "interview-questions": "面试题",
}

VISUALISATIONS = ("expression-graph", "static-vs-dynamic", "compile-flow", "radar", "selection-guide")

_FENCE = re.compile(r"^```[ \t]*([^\n`]*)\n(.*?)^```[ \t]*$\n?", re.M | re.S)
_DIRECTIVE = re.compile(r"^:::[ \t]*(viz|questions)[ \t]+([a-z0-9- ]+?)[ \t]*$", re.M)
_LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{1,60}$")
_KEYS = {"id", "order", "title", "summary", "covers", "prerequisites", "exercises", "quiz", "topics", "interviews"}


@dataclasses.dataclass(frozen=True)
class Segment:
    """One piece of a lesson page: markdown text, a code block (maybe runnable), or a visualisation."""

    kind: str            # "markdown" | "code" | "viz" | "questions"
    text: str            # markdown, the code, the visualisation's name, or question ids (space-separated)
    language: str = ""   # a code block's language
    runnable: bool = False
    output: str | None = None   # what a runnable block claims to print

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Lesson:
    slug: str
    order: int
    title: dict[str, str]
    summary: dict[str, str]
    body: dict[str, str]
    covers: list[str]
    prerequisites: list[str]
    exercises: list[str]
    quiz: list[str]
    topics: list[str]
    interviews: list[str]
    data: dict[str, Any] = dataclasses.field(default_factory=dict)   # <visualisation>.toml files, by name

    def segments(self, language: str) -> list[Segment]:
        return split_segments(self.body[language])

    def runnable(self) -> list[Segment]:
        return [s for lang in LANGUAGES for s in self.segments(lang) if s.runnable]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False).encode()).hexdigest()


@dataclasses.dataclass
class LessonSet:
    lessons: list[Lesson]
    problems: dict[str, list[str]]   # by lesson folder; a folder with problems is left out of `lessons`

    @property
    def ok(self) -> bool:
        return not any(self.problems.values())

    def by_slug(self) -> dict[str, Lesson]:
        return {lesson.slug: lesson for lesson in self.lessons}


class LessonError(ValueError):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def split_segments(markdown: str) -> list[Segment]:
    """Markdown, code blocks, ``::: viz NAME`` and ``::: questions ID ...`` markers, in page order."""
    segments: list[Segment] = []

    def add_markdown(text: str) -> None:
        position = 0
        for directive in _DIRECTIVE.finditer(text):
            if text[position:directive.start()].strip():
                segments.append(Segment("markdown", text[position:directive.start()]))
            segments.append(Segment(directive.group(1), " ".join(directive.group(2).split())))
            position = directive.end()
        if text[position:].strip():
            segments.append(Segment("markdown", text[position:]))

    position = 0
    for fence in _FENCE.finditer(markdown):
        add_markdown(markdown[position:fence.start()])
        info = fence.group(1).split()
        language = info[0] if info else ""
        code = fence.group(2)
        if language == "output" and segments and segments[-1].runnable and segments[-1].output is None \
                and not markdown[position:fence.start()].strip():
            segments[-1] = dataclasses.replace(segments[-1], output=code)
        else:
            segments.append(Segment("code", code, language, runnable=language == "python" and "run" in info[1:]))
        position = fence.end()
    add_markdown(markdown[position:])
    return segments


def load_lesson(folder: Path) -> Lesson:
    """One lesson folder, or LessonError listing everything wrong with it (file and key named)."""
    folder = Path(folder)
    label = f"lessons/{folder.name}"
    problems: list[str] = []
    try:
        data = tomllib.loads((folder / LESSON_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LessonError([f"{label}: {LESSON_FILE} is missing"]) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise LessonError([f"{label}/{LESSON_FILE}: not valid TOML ({error})"]) from None
    where = f"{label}/{LESSON_FILE}"
    for key in sorted(set(data) - _KEYS):
        problems.append(f"{where}: unknown key {key!r} (known: {', '.join(sorted(_KEYS))})")
    if data.get("id") != folder.name:
        problems.append(f"{where}: id must be the folder's name {folder.name!r}, got {data.get('id')!r}")
    if not _SLUG.match(folder.name):
        problems.append(f"{where}: the folder name must be lowercase letters, digits and '-'")
    order = data.get("order")
    if not isinstance(order, int) or isinstance(order, bool) or order < 1:
        problems.append(f"{where}: order must be a positive whole number, got {order!r}")
    texts = {}
    for key in ("title", "summary"):
        value = data.get(key)
        if not isinstance(value, dict) or any(not isinstance(value.get(lang), str) or not value[lang].strip()
                                              for lang in LANGUAGES):
            problems.append(f"{where}: {key}.en and {key}.zh-hans are both required")
            value = {}
        texts[key] = {lang: str(value.get(lang, "")).strip() for lang in LANGUAGES}
    lists = {}
    for key in ("covers", "prerequisites", "exercises", "quiz", "topics", "interviews"):
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            problems.append(f"{where}: {key} must be a list of strings")
            value = []
        lists[key] = value
    for section in lists["covers"]:
        if section not in ARTICLE_SECTIONS:
            problems.append(f"{where}: covers names {section!r}, which is not a section of the article "
                            f"({', '.join(ARTICLE_SECTIONS)})")
    body = {}
    for lang in LANGUAGES:
        try:
            body[lang] = (folder / f"{lang}.md").read_text(encoding="utf-8")
        except FileNotFoundError:
            problems.append(f"{label}/{lang}.md is missing: every lesson comes in English and Simplified Chinese")
            body[lang] = ""
        except UnicodeDecodeError as error:
            problems.append(f"{label}/{lang}.md: not UTF-8 ({error.reason})")
            body[lang] = ""
    viz_data = {}
    for path in sorted(folder.glob("*.toml")):
        if path.name == LESSON_FILE:
            continue
        if path.stem not in VISUALISATIONS:
            problems.append(f"{label}/{path.name}: only {LESSON_FILE} and data for a visualisation "
                            f"({', '.join(VISUALISATIONS)}) belong here")
            continue
        try:
            viz_data[path.stem] = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            problems.append(f"{label}/{path.name}: not valid TOML ({error})")
    if problems:
        raise LessonError(problems)
    assert isinstance(order, int)  # checked above: problems would have been raised
    return Lesson(slug=folder.name, order=order, title=texts["title"], summary=texts["summary"], body=body,
                  data=viz_data, **lists)


def load_lessons(content_dir: Path) -> LessonSet:
    """Every folder under ``content_dir/lessons``, ordered by ``order``; broken ones are reported, not raised."""
    root = Path(content_dir) / "lessons"
    lessons: list[Lesson] = []
    problems: dict[str, list[str]] = {}
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))) \
        if root.is_dir() else []
    for folder in folders:
        try:
            lessons.append(load_lesson(folder))
            problems[folder.name] = []
        except LessonError as error:
            problems[folder.name] = error.problems
    lessons.sort(key=lambda lesson: (lesson.order, lesson.slug))
    return LessonSet(lessons, problems)


def check_lessons(content_dir: Path) -> LessonSet:
    """Load the lessons and check every reference: prerequisites, exercises, quiz questions,
    topics, interview templates, links, visualisation names, the learning path and the
    article's coverage. No sandbox is needed; :func:`validate_lessons` adds the code."""
    content_dir = Path(content_dir)
    result = load_lessons(content_dir)
    quiz = load_content(content_dir)
    known = {
        "exercises": {folder.name for folder in exercise_folders(content_dir)}, "quiz": set(quiz.questions),
        "topics": set(quiz.topics), "interviews": {t.id for t in quiz.templates},
    }
    slugs = {lesson.slug for lesson in result.lessons} | {name for name, found in result.problems.items() if found}
    orders: dict[int, str] = {}
    for lesson in result.lessons:
        problems = result.problems[lesson.slug]
        where = f"lessons/{lesson.slug}"
        if lesson.order in orders:
            problems.append(f"{where}: order {lesson.order} is also {orders[lesson.order]}'s; the path needs one order")
        orders.setdefault(lesson.order, lesson.slug)
        for prerequisite in lesson.prerequisites:
            if prerequisite not in slugs:
                problems.append(f"{where}: prerequisite {prerequisite!r} is not a lesson")
        for key, names in known.items():
            for name in getattr(lesson, key):
                if name not in names:
                    problems.append(f"{where}: {key} names {name!r}, which does not exist")
        for lang in LANGUAGES:
            segments = lesson.segments(lang)
            for segment in segments:
                if segment.kind == "viz" and segment.text not in VISUALISATIONS:
                    problems.append(f"{where}/{lang}.md: unknown visualisation {segment.text!r} "
                                    f"(known: {', '.join(VISUALISATIONS)})")
                if segment.kind == "questions":
                    for question in segment.text.split():
                        if question not in known["quiz"]:
                            problems.append(f"{where}/{lang}.md: ::: questions names {question!r}, which is not a "
                                            f"question of any bank")
            text = "".join(s.text for s in segments if s.kind == "markdown")
            for target in _LINK.findall(text):
                problem = _link_problem(target, slugs, known["exercises"])
                if problem:
                    problems.append(f"{where}/{lang}.md: link {target!r}: {problem}")
        if "selection-guide" in lesson.data:
            problems.extend(f"{where}/selection-guide.toml: {problem}" for problem in
                            _guide_problems(lesson.data["selection-guide"], slugs, known["exercises"]))
        shapes = [[(s.kind, s.language, s.runnable, s.text if s.kind in ("viz", "questions") else "")
                   for s in lesson.segments(lang)]
                  for lang in LANGUAGES]
        if shapes[0] != shapes[1]:
            problems.append(f"{where}: en.md and zh-hans.md must hold the same code blocks and visualisations, "
                            f"in the same order")
    by_slug = result.by_slug()
    for lesson in result.lessons:   # prerequisites come earlier on the path, so the path has no cycle
        for prerequisite in lesson.prerequisites:
            before = by_slug.get(prerequisite)
            if before is not None and before.order >= lesson.order:
                result.problems[lesson.slug].append(
                    f"lessons/{lesson.slug}: prerequisite {prerequisite!r} must come earlier on the path "
                    f"(order {before.order} is not below {lesson.order})")
    if result.lessons:
        covered = {section for lesson in result.lessons for section in lesson.covers}
        missing = [key for key in ARTICLE_SECTIONS if key not in covered]
        if missing:
            result.problems.setdefault("_path", []).append(
                "no lesson covers the article's section(s): "
                + ", ".join(f"{k} ({ARTICLE_SECTIONS[k]})" for k in missing))
    return result


def _guide_problems(guide: dict[str, Any], lessons: set[str], exercises: set[str]) -> list[str]:
    """What is wrong with the selection guide's data: options an answer names that do not exist
    (in its scores or its hard constraint), and links that go nowhere."""
    problems: list[str] = []
    options = [o.get("id") for o in guide.get("options", []) if isinstance(o, dict)]
    for option in guide.get("options", []):
        for item in [*option.get("pitfalls", []), *option.get("next", [])]:
            problem = _link_problem(str(item.get("href", "")), lessons, exercises)
            if problem:
                problems.append(f"option {option.get('id')!r}: link {item.get('href')!r}: {problem}")
    for question in guide.get("questions", []):
        for k, answer in enumerate(question.get("answers", [])):
            where = f"question {question.get('id')!r}, answer {k + 1}"
            for name in answer.get("scores", {}):
                if name not in options:
                    problems.append(f"{where}: scores name {name!r}, which is not an option")
            if "requires" in answer:
                required = answer["requires"]
                if not isinstance(required, list) or not required:
                    problems.append(f"{where}: requires must be a non-empty list of option ids")
                    continue
                for name in required:
                    if name not in options:
                        problems.append(f"{where}: requires names {name!r}, which is not an option")
    return problems


def _link_problem(target: str, lessons: set[str], exercises: set[str]) -> str:
    if target.startswith("https://"):
        return ""
    if target.startswith("#"):
        return ""
    if target.startswith("http://"):
        return "use https"
    match = re.fullmatch(r"/(lessons|exercises)/([a-z0-9-]+)/(#[\w-]+)?", target)
    if match:
        kind, slug = match.group(1), match.group(2)
        if slug not in (lessons if kind == "lessons" else exercises):
            return f"no {kind[:-1]} {slug!r}"
        return ""
    if target in ("/lessons/", "/quizzes/", "/interviews/", "/lessons/playground/", "/"):
        return ""
    return "not a page of the site (links go to https://..., /lessons/<slug>/, /exercises/<slug>/ or /quizzes/)"


def normalise_output(text: str) -> str:
    """Trailing spaces and trailing blank lines do not count; everything else does."""
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def validate_lessons(content_dir: Path, sandbox: Any, *, executor: Executor | None = None) -> dict[str, list[str]]:
    """Problems by lesson (empty lists when valid): :func:`check_lessons`, then every runnable
    block run in ``sandbox`` (once per distinct program), which must exit 0 and print what it claims.
    With ``executor``, the blocks run through it (concurrently); the problems come out the same."""
    result = check_lessons(content_dir)
    problems = result.problems
    if sandbox is None:
        return problems
    programs = list(dict.fromkeys(s.text for lesson in result.lessons for s in lesson.runnable()))
    if executor is None:
        ran = {text: run_program(text, sandbox) for text in programs}
    else:
        futures = [executor.submit(run_program, text, sandbox) for text in programs]
        ran = {text: future.result() for text, future in zip(programs, futures, strict=True)}
    for lesson in result.lessons:
        for segment in lesson.runnable():
            outcome: RunResult = ran[segment.text]
            first_line = segment.text.strip().splitlines()[0][:60] if segment.text.strip() else ""
            where = f"lessons/{lesson.slug}: the block starting {first_line!r}"
            if not outcome.ok:
                message = f"{where} does not run ({outcome.status}, exit {outcome.exit_code}): {outcome.stderr[-400:]}"
            elif segment.output is not None and normalise_output(outcome.stdout) != normalise_output(segment.output):
                message = (f"{where} prints {normalise_output(outcome.stdout)!r}, but the lesson claims "
                           f"{normalise_output(segment.output)!r}")
            else:
                continue
            if message not in problems[lesson.slug]:
                problems[lesson.slug].append(message)
    return problems
