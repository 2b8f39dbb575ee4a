"""Leases on running work: how the platform tells a job whose worker died from a long one.

A job row taken by a worker (any job of the one job path, grading.jobs) carries
``lease_until``; a thread of the worker renews it every GRADING_HEARTBEAT_S while the job runs.
A worker killed with the job (kill -9 of a pool child, a host gone) stops renewing, and the
row is taken again once its lease lapsed (GRADING_LEASE_S), however long a grading may last.
A job that hangs with its worker alive is renewed only up to its own cap (``max_s``), after
which the lease lapses too. Whoever takes a row moves its ``attempts`` on, and a store is
guarded by the attempt that claimed the row, so a worker that was merely slow stores nothing.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import Q, QuerySet
from django.utils import timezone

log = logging.getLogger(__name__)


def lease_end(now: datetime | None = None) -> datetime:
    """When a lease taken or renewed now lapses."""
    return (now or timezone.now()) + timedelta(seconds=settings.GRADING_LEASE_S)


def lapsed(running: str, now: datetime | None = None, started_field: str = "started_at",
           status_field: str = "status") -> Q:
    """Rows in the ``running`` status whose worker stopped renewing their lease.

    A row with no lease (taken before leases existed) lapses one lease after it started.
    """
    now = now or timezone.now()
    one_lease_ago = now - timedelta(seconds=settings.GRADING_LEASE_S)
    no_lease = Q(lease_until__isnull=True, **{f"{started_field}__lt": one_lease_ago})
    return Q(**{status_field: running}) & (Q(lease_until__lt=now) | no_lease)


def lease_seconds_left(lease_until: datetime | None, now: datetime | None = None) -> float:
    """How long until ``lease_until`` lapses (0 when it has or there is none)."""
    if lease_until is None:
        return 0.0
    return max(0.0, (lease_until - (now or timezone.now())).total_seconds())


class Heartbeat:
    """Renews the lease of the rows in ``held`` (the job's row, filtered on the claiming attempt)
    every GRADING_HEARTBEAT_S from a thread of its own, for at most ``max_s`` seconds."""

    def __init__(self, held: QuerySet, max_s: float) -> None:
        self.held = held
        self.max_s = max_s
        self.renewals = 0
        self.lost = False  # the row was taken by another attempt (or finished) meanwhile
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="lease-heartbeat", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        # A renewal waiting on a row lock finishes on its own: its filter no longer matches a
        # stored row, so it cannot revive one. The job need not wait for it.
        self._thread.join(timeout=5)

    def _beat(self) -> None:
        started = timezone.now()
        try:
            while not self._stop.wait(settings.GRADING_HEARTBEAT_S):
                now = timezone.now()
                if (now - started).total_seconds() > self.max_s:
                    log.warning("lease no longer renewed: the job ran past %s s", self.max_s)
                    return
                try:
                    renewed = self.held.update(lease_until=lease_end(now))
                except DatabaseError:  # the database is away: the lease may lapse, the store is guarded
                    log.warning("lease not renewed (database unavailable)", exc_info=True)
                    continue
                if not renewed:
                    self.lost = True
                    log.warning("lease lost: the job was taken by another attempt or finished")
                    return
                self.renewals += 1
        finally:
            connection.close()  # this thread's own connection


@contextmanager
def heartbeat(held: QuerySet, max_s: float) -> Iterator[Heartbeat]:
    """Keep the lease of ``held`` while the block runs (see Heartbeat)."""
    beat = Heartbeat(held, max_s)
    beat.start()
    try:
        yield beat
    finally:
        beat.stop()
