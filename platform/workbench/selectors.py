import dataclasses

from django.db.models import Exists, OuterRef

from accounts.models import User
from catalog.models import Exercise, ExerciseVersion
from catalog.selectors import exercises_published
from workbench.messages import DIFFICULTY_ORDER
from workbench.models import Draft


def draft_code(user: User, exercise: Exercise) -> str | None:
    """The student's saved editor content for ``exercise``, or None if they never typed there."""
    return Draft.objects.filter(user=user, exercise=exercise).values_list("code", flat=True).first()


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
    entries.sort(key=lambda x: (DIFFICULTY_ORDER.get(x.version.difficulty, 9), x.version.points, x.version.title))
    return entries


def exercise_tags() -> list[str]:
    """Every tag of a published exercise, for the filter."""
    return sorted({tag for e in exercises_published() if e.current_version for tag in e.current_version.tags or []})
