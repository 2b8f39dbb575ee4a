"""Getting submissions to workers and never losing one on the way.

One grading message per student at a time (fair queues: a burst waits in the database, not
in front of everyone else), sent to the queue the exercise needs (``gpu`` or ``cpu``). A
publish that fails (broker down) leaves the row QUEUED for the sweep; the sweep also re-sends
rows whose message is gone (broker restart) and reclaims RUNNING rows whose worker died.
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
from django.db.models import F, Q
from django.utils import timezone

from catalog.models import ExerciseUpload
from grading.leases import lapsed
from grading.logs import submission_logging
from grading.models import Submission

log = logging.getLogger(__name__)
CPU_QUEUE, GPU_QUEUE = "cpu", "gpu"
# Sent by name: the task module imports this one, not the other way round.
GRADE_TASK = "grading.tasks.grade_submission"
VALIDATE_UPLOAD_TASK = "grading.tasks.validate_upload"
# A row just published may not show in the broker yet, and a message being handed to a worker
# is briefly in neither list: only rows older than this are judged lost.
LOST_AFTER_S = 30


def queue_for(submission: Submission) -> str:
    return GPU_QUEUE if submission.exercise_version.needs_gpu else CPU_QUEUE


def submission_send(submission: Submission, countdown: float | None = None) -> bool:
    """Publish the grading task; False (logged) when the broker cannot take it now."""
    with submission_logging(submission.id):
        try:
            app.send_task(GRADE_TASK, (submission.id,), queue=queue_for(submission), countdown=countdown)
        except Exception:  # the broker is down: the row stays QUEUED and the sweep sends it
            log.warning("grading task not sent (broker unavailable); the sweep will send it", exc_info=True)
            return False
        log.info("grading task sent to %s", queue_for(submission))
        return True


def upload_send(upload_id: int, countdown: float | None = None) -> bool:
    """Publish an upload's validation; False (logged) when the broker cannot take it now."""
    try:
        app.send_task(VALIDATE_UPLOAD_TASK, (upload_id,), queue=CPU_QUEUE, countdown=countdown)
    except Exception:  # the broker is down: the sweep sends it once the lease lapsed
        log.warning("upload %s: validation not sent (broker unavailable)", upload_id, exc_info=True)
        return False
    return True


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
    # attempts moves on, so a worker that was only slow can no longer store over the regrade.
    reclaimed = list(Submission.objects.filter(lapsed(Submission.Status.RUNNING, now)).values_list("id", flat=True))
    for submission_id in reclaimed:
        with submission_logging(submission_id):
            if Submission.objects.filter(lapsed(Submission.Status.RUNNING, now), id=submission_id).update(
                status=Submission.Status.QUEUED, attempts=F("attempts") + 1
            ):
                log.warning("reclaimed from a worker that stopped renewing its lease")
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
    reclaimed = 0
    for upload_id in ExerciseUpload.objects.filter(lapsed(ExerciseUpload.Status.VALIDATING, now)).values_list(
        "id", flat=True
    ):
        if ExerciseUpload.objects.filter(lapsed(ExerciseUpload.Status.VALIDATING, now), id=upload_id).update(
            status=ExerciseUpload.Status.QUEUED, attempts=F("attempts") + 1
        ):
            log.warning("upload %s: reclaimed from a worker that stopped renewing its lease", upload_id)
            reclaimed += 1
            upload_send(upload_id)
    return reclaimed
