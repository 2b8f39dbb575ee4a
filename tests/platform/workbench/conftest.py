"""Verdict documents as the judge writes them, for pages that show them."""
import json
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.fixture
def graded(exercise, make_user):
    """make(result_name, code) -> a GRADED submission of the thin-path exercise carrying a
    real verdict document recorded from the judge (tests/platform/workbench/verdicts/)."""
    from django.utils import timezone

    from submissions.models import Submission

    def make(name: str, user=None, code: str = "print('hi')\n"):
        result = json.loads((HERE / "verdicts" / f"{name}.json").read_text())
        return Submission.objects.create(
            user=user or make_user(), exercise_version=exercise.current_version, code=code,
            status=Submission.Status.GRADED, verdict=result["verdict"], score=result["score"],
            result=result, finished_at=timezone.now(),
        )

    return make
