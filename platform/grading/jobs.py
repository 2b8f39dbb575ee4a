"""The one job path: every run of untrusted code the platform makes (a grading, a practice run,
an upload's validation, a playground run, a board's re-measuring) is claimed, leased, run,
retried and stored here, by one rule. Each kind of job brings only what is its own: its row
(a ``JobKind``), which sandbox call it makes and what it stores (its ``work``).

- **Claim**: a conditional UPDATE takes a queued row (or one whose worker died: its lease
  lapsed) and moves its ``attempts`` on; a redelivered message finds it taken or done. One that
  finds it held by a live worker comes back when that lease would lapse.
- **Lease**: a heartbeat renews the row's lease while the work runs (``grading.leases``).
- **Retry**: a fault of the platform (the sandbox unavailable, an INTERNAL_ERROR, a bug of ours,
  the database away) puts the row back in the queue and raises ``JobRetry``; the task retries it
  GRADING_MAX_RETRIES times with a backoff of GRADING_RETRY_BACKOFF_S doubling up to
  GRADING_RETRY_BACKOFF_MAX_S, and the last try stores the kind's platform failure, which its
  page says in so many words. What the untrusted code did (wrong, crashed, too slow) is an
  outcome, stored at once and never retried.
- **Store**: exactly once, by the attempt that claimed the row, in one transaction with what the
  kind writes beside it; a late or duplicate store (a worker that lost its lease, a redelivery)
  is refused.
- **Progress**: every state a page polls is one of queued, running, measuring again, done, or
  failed (with the reason the kind stored).
"""
from __future__ import annotations

import dataclasses
import enum
import logging
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from celery import Task
from celery import current_app as app
from django.conf import settings
from django.db import DatabaseError, IntegrityError, InterfaceError, OperationalError, models, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from grading.leases import heartbeat, lapsed, lease_end, lease_seconds_left

log = logging.getLogger(__name__)
# The database going away is the platform's fault too; the claim and the store meet it first.
DATABASE_FAULTS = (OperationalError, InterfaceError)


class JobRetry(Exception):
    """The platform failed this attempt; the row is queued again and the task retries."""


class PlatformFault(Exception):
    """Raised by a job's work when the platform, not the untrusted code, failed (INTERNAL_ERROR):
    retried like the sandbox being unavailable. ``result`` is the judge's own document, if any."""

    def __init__(self, cause: str, result: dict[str, Any] | None = None) -> None:
        super().__init__(cause)
        self.result = result


# Celery options of every job's task: the one retry rule (a task wrapper takes ids only).
JOB_TASK_OPTIONS: dict[str, Any] = {
    "bind": True,
    "acks_late": True,
    "reject_on_worker_lost": True,  # a pool child killed mid-run puts the message back
    "autoretry_for": (JobRetry,),
    "retry_backoff": settings.GRADING_RETRY_BACKOFF_S,
    "retry_backoff_max": settings.GRADING_RETRY_BACKOFF_MAX_S,
    "retry_jitter": False,
    "max_retries": settings.GRADING_MAX_RETRIES,
}


def final_attempt(task: Task) -> bool:
    """Whether this try of a job's task is its last: a platform fault is then stored, not retried."""
    return task.request.retries >= (task.max_retries or 0)


class Progress(enum.Enum):
    """What a page polling a job shows."""

    QUEUED = "queued"
    RUNNING = "running"
    MEASURING = "measuring"  # a grading whose speed did not settle, measured again later
    DONE = "done"
    FAILED = "failed"  # with the reason its kind stored

    @property
    def finished(self) -> bool:
        """Nothing more will happen to the row: its page stops polling."""
        return self in (Progress.DONE, Progress.FAILED)


class Claim(enum.Enum):
    TAKEN = "taken"  # ours to run
    BUSY = "busy"  # another worker holds its lease: look again when the lease would lapse
    DONE = "done"  # finished already (or gone)


@dataclasses.dataclass(frozen=True)
class JobKind:
    """A kind of job: its row and how that row's states read."""

    name: str
    model: type[models.Model]
    task: str  # sent by name: the task modules import the job path, not the other way round
    queued: str
    running: str
    progress: Mapping[str, Progress]  # every status the row can be in
    # The fields a job that ran out of retries stores, from the last fault: the reason its page shows.
    failed: Callable[[BaseException], dict[str, Any]]
    max_s: Callable[[], float]  # the heartbeat's cap: a job hanging with its worker alive loses its lease after it
    status_field: str = "status"
    finished_field: str = "finished_at"
    queue: Callable[[int], str | None] = lambda job_id: None
    # Claimable besides queued and lapsed rows (a grading whose measure-again is due).
    also_claimable: Callable[[datetime], Q] | None = None
    # Run inside the storing transaction of every store that finishes a job (a verdict's signal).
    finished: Callable[[int], None] | None = None
    # Where a row put back would break a constraint (another one already waits for the same
    # work), it ends in this status instead: that one will do the work.
    superseded: str | None = None

    def rows(self) -> QuerySet:
        return self.model._default_manager.all()

    def status_is(self, *statuses: str) -> Q:
        return Q(**{f"{self.status_field}__in": statuses})

    def is_finished(self, status: str) -> bool:
        return self.progress[status].finished

    def progress_of(self, row: models.Model) -> Progress:
        """Where ``row`` stands: what every page and API polling this kind of job shows."""
        return self.progress[getattr(row, self.status_field)]


class Claimed(NamedTuple):
    claim: Claim
    attempt: int


@dataclasses.dataclass(frozen=True)
class Job:
    """A job this attempt holds: only it may store."""

    kind: JobKind
    id: int
    attempt: int

    def held(self) -> QuerySet:
        return self.kind.rows().filter(self.kind.status_is(self.kind.running), id=self.id, attempts=self.attempt)


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What a job's work stores: ``fields`` on its row and ``also`` (other rows) in the same transaction."""

    fields: dict[str, Any]
    also: Callable[[], None] | None = None


def job_claim(kind: JobKind, job_id: int) -> Claimed:
    """Take a queued row (or one whose worker died: its lease lapsed) with a conditional UPDATE."""
    now = timezone.now()
    claimable = kind.status_is(kind.queued) | lapsed(kind.running, now, status_field=kind.status_field)
    if kind.also_claimable is not None:
        claimable |= kind.also_claimable(now)
    taken = kind.rows().filter(claimable, id=job_id).update(
        **{kind.status_field: kind.running}, started_at=now, lease_until=lease_end(now), attempts=F("attempts") + 1
    )
    row = kind.rows().filter(id=job_id).values(kind.status_field, "attempts").first()
    if row is None:
        return Claimed(Claim.DONE, 0)
    if taken:
        return Claimed(Claim.TAKEN, row["attempts"])
    return Claimed(Claim.BUSY if row[kind.status_field] == kind.running else Claim.DONE, row["attempts"])


def job_run(kind: JobKind, job_id: int, work: Callable[[Job], Outcome], *, final_attempt: bool) -> Claim:
    """Claim the job, run ``work`` under its lease, and store its outcome by the one rule (above)."""
    try:
        claimed = job_claim(kind, job_id)
        if claimed.claim is Claim.BUSY:
            job_look_again(kind, job_id)
        if claimed.claim is not Claim.TAKEN:
            log.info("%s %s not run here: %s", kind.name, job_id, claimed.claim.value)
            return claimed.claim
        job = Job(kind, job_id, claimed.attempt)
        log.info("%s %s: attempt %s", kind.name, job_id, job.attempt)
        try:
            with heartbeat(job.held(), max_s=kind.max_s()):
                outcome = work(job)
        except Exception as fault:  # the platform's, never the untrusted code's: that is an outcome
            if not isinstance(fault, PlatformFault):
                log.warning("%s %s: platform fault", kind.name, job_id, exc_info=True)
            if not final_attempt:
                job_release(job)
                raise JobRetry(f"{kind.name} {job_id}: {fault!r}") from fault
            log.error("%s %s: platform fault on the last attempt; stored as failed: %r", kind.name, job_id, fault)
            outcome = Outcome(kind.failed(fault))
        job_store(job, outcome)
        return Claim.TAKEN
    except DATABASE_FAULTS as fault:
        if not final_attempt:
            raise JobRetry(f"{kind.name} {job_id}: {fault!r}") from fault
        job_give_up(kind, job_id, fault)
        return Claim.DONE


def job_store(job: Job, outcome: Outcome) -> bool:
    """Store ``outcome`` once: only the attempt that claimed the row, in one transaction; False
    (nothing stored) when the row was taken by another attempt or finished meanwhile."""
    kind, fields = job.kind, dict(outcome.fields)
    finishes = kind.is_finished(fields[kind.status_field])
    if finishes:
        fields.setdefault(kind.finished_field, timezone.now())
    with transaction.atomic():
        if not job.held().update(**fields):
            log.warning("%s %s: not stored, another attempt took it or it finished meanwhile", kind.name, job.id)
            return False
        log.info("%s %s: stored %s", kind.name, job.id, fields[kind.status_field])
        if outcome.also is not None:
            outcome.also()
        if finishes and kind.finished is not None:
            kind.finished(job.id)
    return True


def job_release(job: Job) -> None:
    """Put the row back in the queue for the task's retry (or superseded, see JobKind)."""
    try:
        with transaction.atomic():
            job.held().update(**{job.kind.status_field: job.kind.queued}, lease_until=None)
    except IntegrityError:
        if job.kind.superseded is None:
            raise
        job.held().update(**{job.kind.status_field: job.kind.superseded, job.kind.finished_field: timezone.now()})


def job_give_up(kind: JobKind, job_id: int, fault: BaseException) -> None:
    """The last try met the database away: store the platform failure if it lets us; if not, the
    row stays where it is and its lease lapses for the sweep."""
    try:
        with transaction.atomic():
            waiting = kind.rows().filter(kind.status_is(kind.queued, kind.running), id=job_id)
            if waiting.update(**kind.failed(fault), **{kind.finished_field: timezone.now()}):
                log.error("%s %s stored as failed: %r", kind.name, job_id, fault)
                if kind.finished is not None:
                    kind.finished(job_id)
    except DatabaseError:
        log.warning("%s %s: could not store the failure (the database is still down)", kind.name, job_id)


def job_expire(kind: JobKind, job_id: int, *, after_s: float, fields: dict[str, Any]) -> bool:
    """End a job still waiting (queued or running) ``after_s`` after it was asked for, with
    ``fields`` saying why (its task lost with a broker, no worker to run it), so that its page
    stops waiting. A late store of the attempt that ran it is then refused."""
    late = kind.rows().filter(kind.status_is(kind.queued, kind.running), id=job_id,
                              created_at__lt=timezone.now() - timedelta(seconds=after_s))
    if not late.update(**fields, **{kind.finished_field: timezone.now()}):
        return False
    log.warning("%s %s: no result within %s s; given up", kind.name, job_id, after_s)
    return True


def job_send(kind: JobKind, job_id: int, countdown: float | None = None) -> bool:
    """Publish the job's task; False (logged) when the broker cannot take it now (a sweep sends it)."""
    try:
        app.send_task(kind.task, (job_id,), queue=kind.queue(job_id), countdown=countdown)
    except Exception:  # the broker is down: the row waits for a sweep (or its page's deadline)
        log.warning("%s %s: task not sent (broker unavailable)", kind.name, job_id, exc_info=True)
        return False
    return True


def job_look_again(kind: JobKind, job_id: int) -> None:
    """A message redelivered while another worker holds the row (a cold shutdown, a lost pool
    child) is not dropped: it comes back when that lease would lapse, and takes the row if it
    did (a live worker renews it; the message then comes back again)."""
    lease_until = kind.rows().filter(kind.status_is(kind.running), id=job_id).values_list(
        "lease_until", flat=True).first()
    if lease_until is not None:
        job_send(kind, job_id, countdown=max(1.0, lease_seconds_left(lease_until) + 1))


def jobs_reclaim(kind: JobKind, now: datetime | None = None) -> list[int]:
    """Put back the rows whose worker died (their lease lapsed); attempts moves on, so that a
    worker that was only slow can no longer store. The ids put back in the queue."""
    now = now or timezone.now()
    dead = lapsed(kind.running, now, status_field=kind.status_field)
    reclaimed = []
    for job_id in kind.rows().filter(dead).values_list("id", flat=True):
        try:
            with transaction.atomic():
                moved = kind.rows().filter(dead, id=job_id).update(
                    **{kind.status_field: kind.queued}, attempts=F("attempts") + 1, lease_until=None)
        except IntegrityError:
            if kind.superseded is None:
                raise
            kind.rows().filter(dead, id=job_id).update(
                **{kind.status_field: kind.superseded, kind.finished_field: now})
            continue
        if moved:
            log.warning("%s %s: reclaimed from a worker that stopped renewing its lease", kind.name, job_id)
            reclaimed.append(job_id)
    return reclaimed


def jobs_sweep(kind: JobKind, now: datetime | None = None) -> int:
    """Beat: reclaim the rows whose worker died and send them again."""
    reclaimed = jobs_reclaim(kind, now)
    for job_id in reclaimed:
        job_send(kind, job_id)
    return len(reclaimed)
