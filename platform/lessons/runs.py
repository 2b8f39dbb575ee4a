"""What a worker does with a playground run: run it in the grading sandbox and store the result
on the run. Only Celery workers call this (``lessons.tasks``); the web process never runs
untrusted code (../shared/DESIGN.md, "one job path")."""
from __future__ import annotations

import dataclasses
import logging
import re
from typing import Any

from celery import current_app as app
from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from grader.host import SandboxUnavailable, run_compile_flow, run_program
from grading.leases import heartbeat, lapsed, lease_end, lease_seconds_left
from grading.sandboxes import grading_sandbox
from lessons.models import PlaygroundRun

log = logging.getLogger(__name__)
State, Failure = PlaygroundRun.State, PlaygroundRun.Failure
PLAYGROUND_TASK = "lessons.tasks.run_playground"  # sent by name: the task module imports this one


def playground_run_execute(*, run_id: int, final_attempt: bool) -> None:
    """Claim one queued run, run it where gradings run, and store what came back.

    Idempotent: a redelivered task finds the run taken or finished and returns. A sandbox that
    is unavailable puts the run back for the task's retry, except on the last attempt: then the
    run ends FAILED, and the page says to try again instead of waiting for ever.
    """
    attempt = playground_run_claim(run_id)
    if attempt is None:
        _look_again(run_id)
        return
    run = PlaygroundRun.objects.get(id=run_id)
    # Only the attempt that claimed the run stores (a worker that lost its lease stores nothing).
    held = PlaygroundRun.objects.filter(id=run_id, state=State.RUNNING, attempts=attempt)
    result: dict[str, Any] | None = None
    status, wall_s, failure = "", None, ""
    try:
        with heartbeat(held, max_s=settings.GRADING_MAX_S):
            if run.kind == PlaygroundRun.Kind.COMPILE_FLOW:
                result = run_compile_flow(run.code, grading_sandbox())
                status = "ok" if result.get("ok") else "error"
            else:
                outcome = run_program(run.code, grading_sandbox())
                outcome = dataclasses.replace(outcome, stderr=without_sandbox_frames(outcome.stderr))
                result, status, wall_s = outcome.to_dict(), outcome.status, outcome.wall_s
                if outcome.status == "sandbox_error":  # the sandbox's own fault, not the program's
                    failure = Failure.INTERNAL
    except SandboxUnavailable:
        if not final_attempt:
            held.update(state=State.QUEUED, started_at=None)
            raise
        log.warning("playground run %s: the sandbox stayed unavailable through every retry", run_id)
        failure = Failure.UNAVAILABLE
    except Exception:  # a bug of ours: say the run failed, never leave it spinning
        log.exception("playground run %s failed", run_id)
        result, failure = None, Failure.INTERNAL
    held.update(state=State.FAILED if failure else State.DONE, failure=failure, result=result, status=status,
                wall_s=wall_s, finished_at=timezone.now())


def playground_run_claim(run_id: int) -> int | None:
    """Take a queued run (or one whose worker died: its lease lapsed); the owning attempt, or None."""
    now = timezone.now()
    claimable = Q(state=State.QUEUED) | lapsed(State.RUNNING, now, status_field="state")
    taken = PlaygroundRun.objects.filter(claimable, id=run_id).update(
        state=State.RUNNING, started_at=now, lease_until=lease_end(now), attempts=F("attempts") + 1)
    if not taken:
        return None
    return PlaygroundRun.objects.values_list("attempts", flat=True).get(id=run_id)


def _look_again(run_id: int) -> None:
    """A message that found the run held by another worker (redelivered after a pool child was
    killed) comes back when that worker's lease would lapse, instead of being dropped."""
    row = PlaygroundRun.objects.filter(id=run_id, state=State.RUNNING).first()
    if row is None:
        return
    try:
        app.send_task(PLAYGROUND_TASK, (run_id,), countdown=max(1.0, lease_seconds_left(row.lease_until) + 1))
    except Exception:  # the broker is down: the run's deadline ends it (playground_run_give_up_if_late)
        log.warning("playground run %s not sent again (broker unavailable)", run_id, exc_info=True)


_FRAME = re.compile(r'^  File "(?P<file>[^"]+)", line \d+')
_NOT_THE_STUDENTS = ("zygote.py", "runpy", "/sandbox/", "bootstrap.py")


def without_sandbox_frames(stderr: str) -> str:
    """A traceback as the student's program sees it: the frames of the sandbox's own launcher
    (the zygote, runpy) are noise to a reader and say nothing about their code."""
    kept: list[str] = []
    skipping = False
    for line in stderr.splitlines(keepends=True):
        frame = _FRAME.match(line)
        if frame:
            skipping = any(mark in frame["file"] for mark in _NOT_THE_STUDENTS)
        elif not line.startswith("    "):
            skipping = False  # the frame's source and caret lines are indented; anything else ends it
        if not skipping:
            kept.append(line)
    return "".join(kept)
