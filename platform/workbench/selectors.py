import dataclasses
import functools
import tomllib
from collections import Counter

from django.db.models import Exists, OuterRef

from accounts.models import User
from catalog.languages import localized
from catalog.models import Exercise, ExerciseVersion
from catalog.selectors import exercises_published
from grading.models import Submission
from workbench.messages import DIFFICULTY_ORDER
from workbench.models import Draft, HintReveal


def draft_code(user: User, exercise: Exercise) -> str | None:
    """The student's saved editor content for ``exercise``, or None if they never typed there."""
    return Draft.objects.filter(user=user, exercise=exercise).values_list("code", flat=True).first()


def version_hints(version: ExerciseVersion) -> list[dict[str, str]]:
    """exercise.toml's [[hints]] as published with the version (its stored spec, or its file
    for a version stored before specs were)."""
    if version.spec is not None:
        return list(version.spec.get("hints") or [])
    return list(_toml_hints(version.digest, version.files.get("exercise.toml", "")))


@functools.lru_cache(maxsize=256)
def _toml_hints(digest: str, toml_text: str) -> tuple[dict[str, str], ...]:
    try:
        hints = tomllib.loads(toml_text).get("hints", [])
    except tomllib.TOMLDecodeError:
        return ()
    return tuple(h for h in hints if isinstance(h, dict)) if isinstance(hints, list) else ()


@dataclasses.dataclass
class Hints:
    shown: list[str]  # the hints this student opened, in the reader's language
    total: int

    @property
    def next_number(self) -> int | None:
        return len(self.shown) + 1 if len(self.shown) < self.total else None


def hints_of(user: User, exercise: Exercise) -> Hints:
    """The current version's hints, and those ``user`` has opened so far."""
    hints = version_hints(exercise.current_version) if exercise.current_version else []
    opened = HintReveal.objects.filter(user=user, exercise=exercise, number__lte=len(hints)).count()
    return Hints(shown=[localized(hint) for hint in hints[:opened]], total=len(hints))


@dataclasses.dataclass
class ExerciseEntry:
    exercise: Exercise
    version: ExerciseVersion  # the current one
    state: str  # "solved", "attempted" or "new"


def exercise_entries(user: User, *, difficulty: str = "", tag: str = "") -> list[ExerciseEntry]:
    """Published exercises in the suggested order (easy first, then by size), each marked
    solved, attempted or new for ``user``, filtered by difficulty and tag."""
    tried = ExerciseVersion.objects.filter(exercise=OuterRef("pk"), submissions__user=user)
    exercises = exercises_published().annotate(
        solved=Exists(tried.filter(submissions__verdict="ACCEPTED")), attempted=Exists(tried)
    )
    entries = [
        ExerciseEntry(e, e.current_version, "solved" if e.solved else "attempted" if e.attempted else "new")
        for e in exercises
        if e.current_version
        and (not difficulty or e.current_version.difficulty == difficulty)
        and (not tag or tag in (e.current_version.tags or []))
    ]
    return suggested_order(entries)


def suggested_order(entries: list[ExerciseEntry]) -> list[ExerciseEntry]:
    """Easiest first, but never before an exercise it ``requires`` (exercise.toml)."""

    def ease(entry: ExerciseEntry) -> tuple[int, int, str]:
        return DIFFICULTY_ORDER.get(entry.version.difficulty, 9), entry.version.points, entry.version.title

    by_uid = {e.exercise.uid: e for e in entries}
    waiting = {e.exercise.uid: {r for r in _requires(e.version) if r in by_uid} for e in entries}
    ordered: list[ExerciseEntry] = []
    while waiting:
        ready = [by_uid[uid] for uid, needs in waiting.items() if not needs]
        # A cycle in the content must not hide exercises: then the easiest of the rest goes next.
        chosen = min(ready or [by_uid[uid] for uid in waiting], key=ease)
        ordered.append(chosen)
        del waiting[chosen.exercise.uid]
        for needs in waiting.values():
            needs.discard(chosen.exercise.uid)
    return ordered


@functools.lru_cache(maxsize=1024)
def _requires_of(digest: str, toml_text: str) -> tuple[str, ...]:
    try:
        required = tomllib.loads(toml_text).get("requires", [])
    except tomllib.TOMLDecodeError:
        return ()
    return tuple(str(r) for r in required) if isinstance(required, list) else ()


def _requires(version: ExerciseVersion) -> tuple[str, ...]:
    return _requires_of(version.digest, (version.files or {}).get("exercise.toml", ""))


def exercise_tags(min_exercises: int = 2) -> list[str]:
    """Tags shared by at least ``min_exercises`` published exercises, for the filter: a tag
    only one exercise carries filters nothing (there were 65 of them in one dropdown)."""
    counts = Counter(
        tag for e in exercises_published() if e.current_version for tag in set(e.current_version.tags or [])
    )
    return sorted(tag for tag, n in counts.items() if n >= min_exercises)


def continue_with(user: User, entries: list[ExerciseEntry]) -> ExerciseEntry | None:
    """Where the student left off: the unsolved exercise they last submitted to or typed in,
    else the first one not started in the suggested order."""
    unsolved = {e.exercise.pk: e for e in entries if e.state != "solved"}
    touched = [
        *Draft.objects.filter(user=user, exercise_id__in=unsolved).values_list("updated_at", "exercise_id"),
        *Submission.objects.filter(user=user, exercise_version__exercise_id__in=unsolved)
        .order_by("-created_at")
        .values_list("created_at", "exercise_version__exercise_id")[:1],
    ]
    if touched:
        return unsolved[max(touched)[1]]
    return next((e for e in entries if e.state == "new"), None)


def next_exercise(user: User, after: Exercise) -> ExerciseEntry | None:
    """What to try once ``after`` is solved: the first unsolved exercise in the suggested
    order that comes after it, else the first unsolved one anywhere."""
    entries = exercise_entries(user)
    place = next((i for i, e in enumerate(entries) if e.exercise.pk == after.pk), -1)
    unsolved = [(i, e) for i, e in enumerate(entries) if e.state != "solved" and e.exercise.pk != after.pk]
    later = [e for i, e in unsolved if i > place]
    return next(iter(later or [e for _, e in unsolved]), None)


@dataclasses.dataclass(frozen=True)
class WrongAnswer:
    """One of an exercise's mutants as its editorial shows it."""

    name: str  # the mutant's file name, e.g. "keeps_the_print"
    verdict: str  # the verdict the judge gives it
    why: str  # why it fails, in the reader's language
    code: str


def common_wrong_answers(user: User, exercise: Exercise) -> list[WrongAnswer]:
    """The current version's mutants with why each fails, once ``user`` has solved the
    exercise; nothing before that, since a list of near misses gives the answer away."""
    version = exercise.current_version
    spec = (version.spec if version else None) or {}
    explained = spec.get("why", {})
    if version is None or not explained or not Submission.objects.filter(
        user=user, exercise_version__exercise=exercise, verdict="ACCEPTED"
    ).exists():
        return []
    return [
        WrongAnswer(name, verdict, localized(explained[name]),
                    _without_opening_comment(version.files[f"mutants/{name}.py"]))
        for name, verdict in spec.get("mutants", {}).items()
        if name in explained
    ]


def _without_opening_comment(code: str) -> str:
    """A mutant's code without the comment block that opens it: that note is for the exercise's
    authors, and the reader has ``why`` in their own language instead."""
    lines = code.splitlines()
    while lines and (lines[0].startswith("#") or not lines[0].strip()):
        lines.pop(0)
    return "\n".join(lines)
