"""What a worker does with a task: claim the row, grade or validate in the sandbox, store.

Idempotent under redelivery: a conditional UPDATE claims the work, and only the attempt that
claimed a row may store its verdict (a worker that was merely slow cannot overwrite the
regrade of a reclaimed row). Platform faults put the row back in the queue and raise, so the
task retries; the last try stores FAILED, never a verdict charged to the student.
"""
from __future__ import annotations

import enum
import logging
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import F, Q
from django.utils import timezone

from catalog.models import ExerciseUpload
from catalog.services import upload_folder
from grader.host import Sandbox, SandboxUnavailable, grade, validate_exercise
from grading.dispatch import submission_send, user_dispatch
from grading.exercises import exercise_version_spec
from grading.measure_again import attempt_for, measure_again_later
from grading.models import Submission
from grading.results import result_internal_error, result_is_internal_error, result_of
from grading.sandboxes import grading_sandbox
from grading.signals import submission_graded

log = logging.getLogger(__name__)
# What a student reads when we gave up: our fault, never counted.
NOT_COUNTED = "We could not grade this submission because of a fault on our side; it was not counted."


class GradingRetry(Exception):
    """The platform failed to grade (INTERNAL_ERROR); the submission is queued again."""


class Claim(enum.Enum):
    TAKEN = "taken"  # ours to grade
    BUSY = "busy"  # another worker holds it and is not yet stale: look again later
    DONE = "done"  # graded or failed already


def submission_claim(submission_id: int) -> tuple[Claim, int]:
    """Take a queued submission (or one whose worker died) with a conditional UPDATE.

    Returns the claim and the attempt number that owns the row: only that attempt may store.
    """
    now = timezone.now()
    stale = now - timedelta(seconds=settings.SUBMISSION_STALE_AFTER_S)
    claimable = Q(status=Submission.Status.QUEUED) | Q(status=Submission.Status.RUNNING, started_at__lt=stale)
    claimable |= Q(status=Submission.Status.MEASURING, measure_again_at__lte=now)  # its one measure-again is due
    taken = Submission.objects.filter(claimable, id=submission_id).update(
        status=Submission.Status.RUNNING, started_at=now, attempts=F("attempts") + 1
    )
    row = Submission.objects.filter(id=submission_id).values("status", "attempts").first()
    if row is None:
        return Claim.DONE, 0
    if taken:
        return Claim.TAKEN, row["attempts"]
    return (Claim.BUSY if row["status"] == Submission.Status.RUNNING else Claim.DONE), row["attempts"]


def submission_grade(*, submission_id: int, final_attempt: bool = True) -> Claim:
    """Grade one submission. Platform faults put it back in the queue for the task to retry;
    on the final attempt they store FAILED, never a verdict charged to the student."""
    claim, attempt = submission_claim(submission_id)
    if claim is not Claim.TAKEN:
        log.info("not graded here: %s", claim.value)
        return claim
    submission = Submission.objects.select_related("exercise_version").get(id=submission_id)
    log.info("grading (attempt %s)", attempt)
    try:
        spec = exercise_version_spec(submission.exercise_version)
        result = result_of(grade(spec, submission.code, grading_sandbox(), attempt=attempt_for(submission)))
    except SandboxUnavailable as error:
        if not final_attempt:
            _release(submission_id, attempt)
            raise
        result = _failed("sandbox unavailable", error)
    except Exception as error:  # a bug of ours must not be charged to the student
        log.exception("grading failed")
        result = _failed("internal error", error)
    if result_is_internal_error(result) and not final_attempt:
        _release(submission_id, attempt)
        raise GradingRetry(f"submission {submission_id}: {result.get('notes')}")
    if result.get("unsettled") and measure_again_later(submission_id, result, attempt=attempt):
        return claim  # stored as MEASURING, counted nowhere; its last attempt comes later
    _store(submission_id, result, attempt=attempt)
    return claim


def submission_look_again(submission_id: int, claim: Claim) -> None:
    """A message redelivered while another worker holds the row (a cold shutdown, a lost pool
    child) is not dropped: it comes back once that claim turns stale."""
    if claim is not Claim.BUSY:
        return
    row = Submission.objects.select_related("exercise_version").get(id=submission_id)
    if row.started_at is None:
        return
    stale_at = row.started_at + timedelta(seconds=settings.SUBMISSION_STALE_AFTER_S)
    submission_send(row, countdown=max(1.0, (stale_at - timezone.now()).total_seconds() + 1))


def submission_fail(submission_id: int, cause: str, error: BaseException) -> None:
    """The last retry of an infrastructure fault ran out: store FAILED (not counted) if the
    database lets us; if not, the row stays where it is and the sweep picks it up."""
    try:
        with transaction.atomic():
            failed = Submission.objects.filter(
                id=submission_id, status__in=[Submission.Status.QUEUED, Submission.Status.RUNNING]
            ).update(status=Submission.Status.FAILED, verdict=result_internal_error(error)["verdict"], score=None,
                     result=_failed(cause, error), finished_at=timezone.now())
            if failed:
                log.error("stored FAILED (%s): %r", cause, error)
                submission = Submission.objects.select_related("exercise_version").get(id=submission_id)
                submission_graded.send(sender=Submission, submission=submission)
                transaction.on_commit(lambda: user_dispatch(submission.user_id))
    except DatabaseError:
        log.warning("could not store FAILED (the database is still down); the sweep will retry")


def _failed(cause: str, error: BaseException) -> dict[str, Any]:
    result = result_internal_error(error)
    return {**result, "cause": cause, "notes": [NOT_COUNTED, *result.get("notes", [])]}


def _release(submission_id: int, attempt: int) -> None:
    Submission.objects.filter(id=submission_id, status=Submission.Status.RUNNING, attempts=attempt).update(
        status=Submission.Status.QUEUED
    )


def _store(submission_id: int, result: dict[str, Any], *, attempt: int | None = None) -> None:
    """Store the verdict and tell receivers (leaderboards, metrics) in the same transaction;
    then send the student's next submission. Only the claiming ``attempt`` may store."""
    failed = result_is_internal_error(result)
    running = Submission.objects.filter(id=submission_id, status=Submission.Status.RUNNING)
    with transaction.atomic():
        stored = (running if attempt is None else running.filter(attempts=attempt)).update(
            status=Submission.Status.FAILED if failed else Submission.Status.GRADED,
            verdict=result["verdict"],
            score=None if failed else result["score"],
            result=result,
            finished_at=timezone.now(),
        )
        if not stored:
            log.warning("verdict %s not stored: the submission was reclaimed meanwhile", result["verdict"])
            return
        log.info("verdict stored: %s", result["verdict"])
        submission = Submission.objects.select_related("exercise_version").get(id=submission_id)
        submission_graded.send(sender=Submission, submission=submission)
        transaction.on_commit(lambda: user_dispatch(submission.user_id))


def upload_validate(*, upload_id: int, sandbox: Sandbox | None = None) -> ExerciseUpload:
    """Prove an uploaded exercise in the sandbox, exactly as validate_content proves a folder."""
    claimed = ExerciseUpload.objects.filter(id=upload_id, status=ExerciseUpload.Status.QUEUED).update(
        status=ExerciseUpload.Status.VALIDATING
    )
    upload = ExerciseUpload.objects.get(id=upload_id)
    if not claimed:
        return upload  # another worker has it, or it is done
    try:
        with tempfile.TemporaryDirectory(prefix="upload-") as tmp:
            report = validate_exercise(upload_folder(upload, Path(tmp)), sandbox or grading_sandbox())
    except BaseException:  # a platform fault (e.g. SandboxUnavailable): queued again for the retry
        ExerciseUpload.objects.filter(id=upload_id).update(status=ExerciseUpload.Status.QUEUED)
        raise
    upload.report = report.to_dict()
    upload.error = report.error
    upload.status = ExerciseUpload.Status.VALID if report.ok and not report.skipped else ExerciseUpload.Status.INVALID
    if report.skipped:
        upload.error = report.skipped
    upload.validated_at = timezone.now()
    upload.save(update_fields=["report", "error", "status", "validated_at"])
    return upload
