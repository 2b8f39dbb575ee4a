"""What a worker does with a playground run: run it in the grading sandbox and store the result
on the run. Only Celery workers call this (``lessons.tasks``); the web process never runs
untrusted code (../shared/DESIGN.md, "one job path"). Claim, lease, retry and store are the
job path's (grading.jobs)."""
from __future__ import annotations

import dataclasses
import logging
import re
from typing import Any

from django.conf import settings

from grader.host import SandboxUnavailable, run_compile_flow, run_program
from grading.jobs import Job, JobKind, Outcome, PlatformFault, Progress, job_run
from grading.sandboxes import grading_sandbox
from lessons.models import PlaygroundRun

log = logging.getLogger(__name__)
State, Failure = PlaygroundRun.State, PlaygroundRun.Failure


def _failure(fault: BaseException) -> dict[str, Any]:
    """Why the run could not run, as its page says it."""
    failure = Failure.UNAVAILABLE if isinstance(fault, SandboxUnavailable) else Failure.INTERNAL
    return {"state": State.FAILED, "failure": failure, "result": None}


PLAYGROUND_JOB = JobKind(
    name="playground run",
    model=PlaygroundRun,
    task="lessons.tasks.run_playground",
    queued=State.QUEUED,
    running=State.RUNNING,
    progress={State.QUEUED: Progress.QUEUED, State.RUNNING: Progress.RUNNING, State.DONE: Progress.DONE,
              State.FAILED: Progress.FAILED},  # with its failure: what the page tells the visitor
    failed=_failure,
    max_s=lambda: settings.GRADING_MAX_S,
    status_field="state",
)


def playground_run_execute(*, run_id: int, final_attempt: bool = True) -> None:
    """Run one playground program or compile-flow rerun where gradings run, and store what came back."""
    job_run(PLAYGROUND_JOB, run_id, _execute, final_attempt=final_attempt)


def _execute(job: Job) -> Outcome:
    run = PlaygroundRun.objects.get(id=job.id)
    if run.kind == PlaygroundRun.Kind.COMPILE_FLOW:
        result = run_compile_flow(run.code, grading_sandbox())
        return Outcome({"state": State.DONE, "result": result, "status": "ok" if result.get("ok") else "error"})
    outcome = run_program(run.code, grading_sandbox())
    if outcome.status == "sandbox_error":  # the sandbox's own fault, not the program's
        raise PlatformFault(f"sandbox error: {outcome.stderr[-300:]}")
    outcome = dataclasses.replace(outcome, stderr=without_sandbox_frames(outcome.stderr))
    return Outcome({"state": State.DONE, "result": outcome.to_dict(), "status": outcome.status,
                    "wall_s": outcome.wall_s})


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
