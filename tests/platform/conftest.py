"""Factories for platform tests: real exercises loaded into the catalog, users by role."""
import json
from pathlib import Path

import pytest

THIN_PATH_EXERCISE = "static-graph-executor"
VERDICTS = Path(__file__).parent / "workbench" / "verdicts"  # real verdict documents from the judge


@pytest.fixture
def exercise(db, content_dir, settings, tmp_path):
    """The thin-path exercise, put into the catalog from the real content as content_sync puts
    each exercise (it alone: syncing all of them took a second or two a test, for some 140
    tests; those that need the others sync them, and test_catalog syncs the real content)."""
    from catalog.services import exercise_folder_files, exercise_version_ensure
    from grader.host import load_exercise

    settings.EXERCISE_CACHE_DIR = tmp_path / "exercise-cache"
    folder = content_dir / "coding" / THIN_PATH_EXERCISE
    exercise, _ = exercise_version_ensure(load_exercise(folder), exercise_folder_files(folder))
    return exercise


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
