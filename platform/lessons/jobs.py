"""What a worker does with a playground run: claim it, run it in the grading sandbox, store
what the page shows. The web process only queues the run and waits for its row (services)."""
from __future__ import annotations

import logging
from typing import Any

from celery import current_app as app
from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from grader.host import SandboxUnavailable, run_compile_flow, run_program
from grading.dispatch import CPU_QUEUE
from grading.leases import heartbeat, lapsed, lease_end, lease_seconds_left
from grading.sandboxes import grading_sandbox
from lessons.models import PlaygroundRun

log = logging.getLogger(__name__)
# Sent by name: the task module imports this one, not the other way round.
PLAYGROUND_TASK = "lessons.tasks.run_playground"
UNAVAILABLE: dict[str, Any] = {"ok": False, "unavailable": True}


def playground_send(run_id: int, countdown: float | None = None) -> bool:
    """Publish the run's task; False (logged) when the broker cannot take it now."""
    try:
        app.send_task(PLAYGROUND_TASK, (run_id,), queue=CPU_QUEUE, countdown=countdown)
    except Exception:  # the broker is down: the waiting page says the sandbox is unavailable
        log.warning("playground run %s not sent (broker unavailable)", run_id, exc_info=True)
        return False
    return True


def playground_claim(run_id: int) -> int | None:
    """Take a queued run (or one whose worker died: its lease lapsed); the owning attempt, or None."""
    now = timezone.now()
    State = PlaygroundRun.State
    claimable = Q(state=State.QUEUED) | lapsed(State.RUNNING, now, status_field="state")
    taken = PlaygroundRun.objects.filter(claimable, id=run_id).update(
        state=State.RUNNING, started_at=now, lease_until=lease_end(now), attempts=F("attempts") + 1
    )
    if not taken:
        return None
    return PlaygroundRun.objects.values_list("attempts", flat=True).get(id=run_id)


def playground_execute(*, run_id: int, final_attempt: bool) -> None:
    """Run one playground program or compile flow and store its result (only the claiming attempt
    stores). An unavailable sandbox is retried by the task; the last attempt stores FAILED."""
    attempt = playground_claim(run_id)
    if attempt is None:
        _look_again(run_id)
        return
    run = PlaygroundRun.objects.get(id=run_id)
    held = PlaygroundRun.objects.filter(id=run_id, state=PlaygroundRun.State.RUNNING, attempts=attempt)
    try:
        with heartbeat(held, max_s=settings.GRADING_MAX_S):
            if run.kind == PlaygroundRun.Kind.COMPILE_FLOW:
                result = run_compile_flow(run.source, grading_sandbox())
                status, wall_s = ("ok" if result.get("ok") else "error"), None
            else:
                outcome = run_program(run.source, grading_sandbox())
                result, status, wall_s = outcome.to_dict(), outcome.status, outcome.wall_s
    except SandboxUnavailable:
        if not final_attempt:
            held.update(state=PlaygroundRun.State.QUEUED)
            raise
        log.warning("playground run %s: the sandbox stayed unavailable through every retry", run_id)
        held.update(state=PlaygroundRun.State.FAILED, result=UNAVAILABLE, finished_at=timezone.now())
        return
    if not held.update(state=PlaygroundRun.State.DONE, result=result, status=status, wall_s=wall_s,
                       finished_at=timezone.now()):
        log.warning("playground run %s: result not stored, the run was taken or given up meanwhile", run_id)


def _look_again(run_id: int) -> None:
    """A message that found the run held by another worker (redelivered after a pool child was
    killed) comes back when that worker's lease would lapse, instead of being dropped."""
    row = PlaygroundRun.objects.filter(id=run_id, state=PlaygroundRun.State.RUNNING).first()
    if row is not None:
        playground_send(run_id, countdown=max(1.0, lease_seconds_left(row.lease_until) + 1))
