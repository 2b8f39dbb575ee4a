"""What a worker does with a practice run: the visible checks, stored on the run alone."""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import current_app as app
from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from grader.host import SandboxUnavailable, grade, visible_only
from grading.exercises import exercise_version_spec
from grading.leases import heartbeat, lapsed, lease_end, lease_seconds_left
from grading.results import result_is_internal_error, result_of
from grading.sandboxes import grading_sandbox
from workbench.models import PracticeRun

log = logging.getLogger(__name__)
# Sent by name: the task module imports this one, not the other way round.
PRACTICE_TASK = "workbench.tasks.run_visible_checks"


def practice_run_grade(*, practice_id: int, final_attempt: bool) -> None:
    """Run the visible checks of one practice run and keep the result on the run alone.

    A sandbox that is unavailable puts the run back for the task's retry, except on the
    last attempt: then the run ends as FAILED, and its page says to try again instead of
    waiting for ever.
    """
    attempt = practice_run_claim(practice_id)
    if attempt is None:
        practice_run_look_again(practice_id)
        return
    run = PracticeRun.objects.select_related("exercise_version").get(id=practice_id)
    # Only the attempt that claimed the run stores (a worker that was merely slow stores nothing).
    held = PracticeRun.objects.filter(id=practice_id, status=PracticeRun.Status.RUNNING, attempts=attempt)
    try:
        with heartbeat(held, max_s=settings.SUBMISSION_STALE_AFTER_S):
            spec = visible_only(exercise_version_spec(run.exercise_version))
            result = result_of(grade(spec, run.code, grading_sandbox()))
        status = PracticeRun.Status.FAILED if result_is_internal_error(result) else PracticeRun.Status.DONE
    except SandboxUnavailable:
        if not final_attempt:
            held.update(status=PracticeRun.Status.QUEUED)
            raise
        log.warning("practice run %s: the sandbox stayed unavailable through every retry", practice_id)
        result, status = None, PracticeRun.Status.FAILED
    except Exception:  # a bug of ours: say the run failed, never leave it spinning
        log.exception("practice run %s failed", practice_id)
        result, status = None, PracticeRun.Status.FAILED
    if not held.update(status=status, result=result, finished_at=timezone.now()):
        log.warning("practice run %s: result not stored, the run was taken by another attempt", practice_id)


def practice_run_claim(practice_id: int) -> int | None:
    """Take a queued run (or one whose worker died: its lease lapsed); the owning attempt, or None."""
    now = timezone.now()
    claimable = Q(status=PracticeRun.Status.QUEUED) | lapsed(PracticeRun.Status.RUNNING, now)
    taken = PracticeRun.objects.filter(claimable, id=practice_id).update(
        status=PracticeRun.Status.RUNNING, started_at=now, lease_until=lease_end(now), attempts=F("attempts") + 1
    )
    if not taken:
        return None
    return PracticeRun.objects.values_list("attempts", flat=True).get(id=practice_id)


def practice_run_send(practice_id: int, countdown: float | None = None) -> bool:
    """Publish the run's task; False (logged) when the broker cannot take it now."""
    try:
        app.send_task(PRACTICE_TASK, (practice_id,), countdown=countdown)
    except Exception:  # the broker is down: the sweep sends it, or the run's deadline ends it
        log.warning("practice run %s not sent (broker unavailable)", practice_id, exc_info=True)
        return False
    return True


def practice_run_look_again(practice_id: int) -> None:
    """A message that found the run held by another worker (redelivered after a pool child was
    killed) comes back when that worker's lease would lapse, instead of being dropped."""
    row = PracticeRun.objects.filter(id=practice_id, status=PracticeRun.Status.RUNNING).first()
    if row is not None:
        practice_run_send(practice_id, countdown=max(1.0, lease_seconds_left(row.lease_until) + 1))


def practice_runs_sweep() -> int:
    """Beat: put back runs whose worker died (lease lapsed) and send them again."""
    now = timezone.now()
    reclaimed = 0
    for practice_id in PracticeRun.objects.filter(lapsed(PracticeRun.Status.RUNNING, now)).values_list(
        "id", flat=True
    ):
        if PracticeRun.objects.filter(lapsed(PracticeRun.Status.RUNNING, now), id=practice_id).update(
            status=PracticeRun.Status.QUEUED, attempts=F("attempts") + 1
        ):
            log.warning("practice run %s: reclaimed from a worker that stopped renewing its lease", practice_id)
            reclaimed += 1
            practice_run_send(practice_id)
    return reclaimed


def practice_run_give_up_if_late(run: PracticeRun) -> PracticeRun:
    """End a run that is still waiting PRACTICE_RUN_DEADLINE_S after it was asked for (its
    task lost with a broker, or a worker gone), so that its page stops waiting."""
    deadline = timezone.now() - timedelta(seconds=settings.PRACTICE_RUN_DEADLINE_S)
    late = PracticeRun.objects.filter(
        id=run.id, status__in=(PracticeRun.Status.QUEUED, PracticeRun.Status.RUNNING), created_at__lt=deadline
    ).update(status=PracticeRun.Status.FAILED, finished_at=timezone.now())
    if late:
        log.warning("practice run %s: no result within %s s; given up", run.id, settings.PRACTICE_RUN_DEADLINE_S)
        run.refresh_from_db()
    return run
