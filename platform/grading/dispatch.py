"""Getting submissions to workers and never losing one on the way.

One grading message per student at a time (fair queues: a burst waits in the database, not
in front of everyone else), sent to the queue the exercise needs (``gpu`` or ``cpu``). A
publish that fails (broker down) leaves the row QUEUED for the sweep; the sweep also re-sends
rows whose message is gone (broker restart) and reclaims RUNNING rows whose worker died.
Gradings and upload validations are jobs of the one job path (grading.jobs): their kinds are here.
"""
from __future__ import annotations

import base64
import json
import logging
import time
from datetime import datetime, timedelta
from typing import Any

from celery import current_app as app
from django.conf import settings
from django.db import transaction
from django.db.models import Model, Q
from django.utils import timezone

from catalog.models import ExerciseUpload
from grader.host import SandboxUnavailable
from grading.jobs import DATABASE_FAULTS, JobKind, PlatformFault, Progress, job_send, jobs_reclaim, jobs_sweep
from grading.logs import submission_logging
from grading.models import Submission
from grading.results import result_internal_error
from grading.signals import submission_graded

log = logging.getLogger(__name__)
CPU_QUEUE, GPU_QUEUE = "cpu", "gpu"
# Sent by name: the task module imports this one, not the other way round.
GRADE_TASK = "grading.tasks.grade_submission"
VALIDATE_UPLOAD_TASK = "grading.tasks.validate_upload"
# A row just published may not show in the broker yet, and a message being handed to a worker
# is briefly in neither list: only rows older than this are judged lost.
LOST_AFTER_S = 30
# What a student reads when we gave up: our fault, never counted.
NOT_COUNTED = "We could not grade this submission because of a fault on our side; it was not counted."
# What an instructor reads on an upload the platform could not validate (its report proves nothing).
NOT_VALIDATED = "We could not validate this upload because of a fault on our side; upload it again later."


def _fault_cause(fault: BaseException) -> str:
    if isinstance(fault, SandboxUnavailable):
        return "sandbox unavailable"
    if isinstance(fault, DATABASE_FAULTS):
        return "database unavailable"
    return "internal error"


def submission_failure(fault: BaseException) -> dict[str, Any]:
    """FAILED, with the judge's own INTERNAL_ERROR document where there is one: not counted."""
    result = fault.result if isinstance(fault, PlatformFault) and fault.result else result_internal_error(fault)
    result = {**result, "cause": _fault_cause(fault), "notes": [NOT_COUNTED, *result.get("notes", [])]}
    return {"status": Submission.Status.FAILED, "verdict": result["verdict"], "score": None, "result": result}


def submission_announce(submission_id: int) -> None:
    """A grading finished: tell receivers (leaderboards, metrics) inside the storing transaction,
    then send the student's next submission."""
    submission = Submission.objects.select_related("exercise_version").get(id=submission_id)
    submission_graded.send(sender=Submission, submission=submission)
    transaction.on_commit(lambda: user_dispatch(submission.user_id))


def version_queue(model: type[Model], row_id: int) -> str:
    """The queue for a job whose row names an exercise version: the GPU one when it needs a GPU."""
    needs_gpu = model._default_manager.filter(id=row_id, exercise_version__needs_gpu=True).exists()
    return GPU_QUEUE if needs_gpu else CPU_QUEUE


SUBMISSION_JOB = JobKind(
    name="submission",
    model=Submission,
    task=GRADE_TASK,
    queued=Submission.Status.QUEUED,
    running=Submission.Status.RUNNING,
    progress={
        Submission.Status.QUEUED: Progress.QUEUED,
        Submission.Status.RUNNING: Progress.RUNNING,
        Submission.Status.MEASURING: Progress.MEASURING,
        Submission.Status.GRADED: Progress.DONE,
        Submission.Status.FAILED: Progress.FAILED,
    },
    failed=submission_failure,
    max_s=lambda: settings.SUBMISSION_STALE_AFTER_S,
    queue=lambda submission_id: version_queue(Submission, submission_id),
    # Its one measure-again is due.
    also_claimable=lambda now: Q(status=Submission.Status.MEASURING, measure_again_at__lte=now),
    finished=submission_announce,
)

UPLOAD_JOB = JobKind(
    name="upload",
    model=ExerciseUpload,
    task=VALIDATE_UPLOAD_TASK,
    queued=ExerciseUpload.Status.QUEUED,
    running=ExerciseUpload.Status.VALIDATING,
    progress={
        ExerciseUpload.Status.QUEUED: Progress.QUEUED,
        ExerciseUpload.Status.VALIDATING: Progress.RUNNING,
        ExerciseUpload.Status.VALID: Progress.DONE,
        ExerciseUpload.Status.INVALID: Progress.DONE,  # its error says why (ours, when NOT_VALIDATED)
        ExerciseUpload.Status.PUBLISHED: Progress.DONE,
    },
    failed=lambda fault: {"status": ExerciseUpload.Status.INVALID, "error": NOT_VALIDATED, "report": None},
    # A validation grades the reference and its variants one after the other: capped at a few gradings.
    max_s=lambda: 4 * settings.SUBMISSION_STALE_AFTER_S,
    finished_field="validated_at",
    queue=lambda upload_id: CPU_QUEUE,
)


def queue_for(submission: Submission) -> str:
    return GPU_QUEUE if submission.exercise_version.needs_gpu else CPU_QUEUE


def submission_send(submission: Submission, countdown: float | None = None) -> bool:
    """Publish the grading task; False (logged) when the broker cannot take it now: the row
    stays QUEUED and the sweep sends it."""
    with submission_logging(submission.id):
        sent = job_send(SUBMISSION_JOB, submission.id, countdown=countdown)
        if sent:
            log.info("grading task sent to %s", queue_for(submission))
        return sent


def next_for_user(user_id: int) -> Submission | None:
    """The student's submission that should be in the broker now: the oldest QUEUED one, unless
    one of theirs is already RUNNING (each student has one grading in flight at a time)."""
    mine = Submission.objects.filter(user_id=user_id)
    if mine.filter(status=Submission.Status.RUNNING).exists():
        return None
    return mine.filter(status=Submission.Status.QUEUED).select_related("exercise_version").order_by("id").first()


def user_dispatch(user_id: int) -> None:
    """Send the student's next submission, if there is one (after a verdict is stored)."""
    submission = next_for_user(user_id)
    if submission is not None:
        submission_send(submission)


def broker_submission_ids() -> set[int] | None:
    """Submissions with a grading message in the broker: waiting, or held by a worker that
    took it less than the stale time ago (one held longer went down with its worker).

    None where the transport cannot be read (the embedded filesystem broker): the sweep then
    re-sends every long-queued head, and the idempotent claim makes a duplicate harmless.
    """
    with app.connection_for_read() as connection:
        if connection.transport.driver_type != "redis":
            return None
        channel: Any = connection.default_channel  # kombu's Redis channel
        client = channel.client
        raw = [item for queue in (CPU_QUEUE, GPU_QUEUE) for item in client.lrange(queue, 0, -1)]
        since = time.time() - settings.SUBMISSION_STALE_AFTER_S
        recent = client.zrangebyscore(channel.unacked_index_key, since, "+inf")
        held = [json.loads(item)[0] for item in client.hmget(channel.unacked_key, recent) if item] if recent else []
    ids = set()
    for message in [json.loads(item) for item in raw] + held:
        if message.get("headers", {}).get("task") != GRADE_TASK:
            continue
        body = message["body"]
        if message.get("properties", {}).get("body_encoding") == "base64":
            body = base64.b64decode(body)
        args = json.loads(body)[0]
        ids.add(int(args[0]))
    return ids


def submissions_sweep() -> dict[str, int]:
    """Reclaim RUNNING rows whose lease lapsed and re-send heads of queues whose message is gone;
    reclaim uploads whose validating worker died likewise."""
    now = timezone.now()
    reclaimed = jobs_reclaim(SUBMISSION_JOB, now)
    # Where the broker cannot be read, only a row queued longer than the stale time is re-sent.
    in_broker = broker_submission_ids()
    old = now - timedelta(seconds=LOST_AFTER_S if in_broker is not None else settings.SUBMISSION_STALE_AFTER_S)
    users = set(
        Submission.objects.filter(Q(created_at__lt=old) | Q(id__in=reclaimed), status=Submission.Status.QUEUED)
        .values_list("user_id", flat=True)
    )
    resent = 0
    for user_id in users:
        head = next_for_user(user_id)
        # A duplicate message is harmless (the claim is conditional); a missing one is not.
        if head is None or (in_broker is not None and head.id in in_broker and head.id not in reclaimed):
            continue
        with submission_logging(head.id):
            log.warning("grading task missing from the broker; sending it again")
        resent += submission_send(head)
    return {"reclaimed": len(reclaimed), "resent": resent, "uploads_reclaimed": uploads_sweep(now)}


def uploads_sweep(now: datetime) -> int:
    """Put back uploads whose validating worker died (lease lapsed) and send them again."""
    return jobs_sweep(UPLOAD_JOB, now)
