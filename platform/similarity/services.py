"""Writes of the similarity app: a submission's fingerprints."""

from __future__ import annotations

from grading.models import Submission
from similarity.fingerprints import fingerprint
from similarity.models import Fingerprint


def fingerprint_store(submission_id: int) -> Fingerprint | None:
    """Fingerprint a graded submission's code, the exercise's starter left out (every student
    was handed it). Idempotent: a redelivered task writes the same row again."""
    submission = (
        Submission.objects.select_related("exercise_version")
        .only("id", "code", "status", "exercise_version__starter")
        .filter(id=submission_id, status=Submission.Status.GRADED)
        .first()
    )
    if submission is None:  # gone, or not graded (a platform failure is no work of the student)
        return None
    starter = {p.hash for p in fingerprint(submission.exercise_version.starter)}
    prints = [list(p) for p in fingerprint(submission.code, ignore=starter)]
    row, _ = Fingerprint.objects.update_or_create(submission_id=submission.id, defaults={"prints": prints})
    return row
