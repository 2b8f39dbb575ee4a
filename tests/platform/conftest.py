"""Factories for platform tests: real exercises loaded into the catalog, users by role."""
import json
from pathlib import Path

import pytest

THIN_PATH_EXERCISE = "static-graph-executor"
VERDICTS = Path(__file__).parent / "workbench" / "verdicts"  # real verdict documents from the judge


@pytest.fixture
def exercise(db, content_dir, settings, tmp_path):
    """The thin-path exercise, synced into the catalog from the real content."""
    from catalog.models import Exercise
    from catalog.services import content_sync

    settings.EXERCISE_CACHE_DIR = tmp_path / "exercise-cache"
    report = content_sync(content_dir)
    assert not report.errors, report.errors
    return Exercise.objects.get(slug=THIN_PATH_EXERCISE)


@pytest.fixture
def graded(exercise, make_user):
    """make(result_name, code) -> a GRADED submission of the thin-path exercise carrying a
    real verdict document recorded from the judge (VERDICTS)."""
    from django.utils import timezone

    from grading.models import Submission

    def make(name: str, user=None, code: str = "print('hi')\n"):
        result = json.loads((VERDICTS / f"{name}.json").read_text())
        return Submission.objects.create(
            user=user or make_user(), exercise_version=exercise.current_version, code=code,
            status=Submission.Status.GRADED, verdict=result["verdict"], score=result["score"],
            result=result, finished_at=timezone.now(),
        )

    return make
