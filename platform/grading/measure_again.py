"""Measuring a grading's speed again, once, later (issue 22).

The judge never passes a speed case on a measurement that did not show it: an interval that
straddles the limit, or a wall-clock timing taken while the host was busy, comes back with
``measure_again`` set. A first grading (``attempt="first"``) that says so is stored as
MEASURING ("measuring again: the machine was busy"), counted nowhere, and its task is sent
again with a countdown of GRADING_MEASURE_AGAIN_AFTER_S; that grading is the last attempt
(``attempt="last"``: a still unsettled interval is decided by its median), and its verdict
is the one stored. ``measure_again_at`` is set once and never cleared, so a grading is
measured again at most once, whatever redeliveries, reclaims or retries happen around it.

Same queue as the first grading (``cpu`` or ``gpu``), not a queue of its own: a dedicated
queue is quieter only when its worker has a host of its own, which a small deployment does
not have (on a shared host its worker competes for the same cores), and a queue that no
worker consumes would strand the submission. The countdown moves it past the burst that
made the first measurement unsettled; the last attempt records the load it ran under.
"""
from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from grader.host import Attempt
from grading.dispatch import LOST_AFTER_S, broker_submission_ids, submission_send, user_dispatch
from grading.jobs import Outcome
from grading.logs import submission_logging
from grading.models import Submission

log = logging.getLogger(__name__)


def attempt_for(submission: Submission) -> Attempt:
    """A grading measures again at most once: the measure-again is the last attempt."""
    return "last" if submission.measure_again_at is not None else "first"


def measure_again_later(submission: Submission, result: dict[str, Any]) -> Outcome:
    """What a first grading whose speed did not settle stores: MEASURING, with its task sent
    again after the countdown (both only if this attempt still holds the row, grading.jobs)."""
    delay = settings.GRADING_MEASURE_AGAIN_AFTER_S

    def send_later() -> None:
        # The first measurement is not shown (the next one replaces it); operators get its numbers.
        log.info("measuring again in %s s (%s): %s", delay, ", ".join(result.get("unsettled") or []),
                 [(c.get("name"), c.get("decision"), c.get("ratio"), c.get("interval"))
                  for c in (result.get("perf") or {}).get("cases") or []])
        transaction.on_commit(lambda: submission_send(submission, countdown=delay))
        # The student's next submission need not wait for this one's quieter moment.
        transaction.on_commit(lambda: user_dispatch(submission.user_id))

    due = timezone.now() + timedelta(seconds=delay)
    return Outcome({"status": Submission.Status.MEASURING, "measure_again_at": due, "verdict": "", "score": None,
                    "result": None}, also=send_later)


def measure_again_sweep() -> int:
    """Re-send the measure-again whose message was lost (a broker restart): rows still
    MEASURING well after they were due and with no message in the broker."""
    in_broker = broker_submission_ids()
    lost_after = LOST_AFTER_S if in_broker is not None else settings.SUBMISSION_STALE_AFTER_S
    overdue = Submission.objects.filter(
        status=Submission.Status.MEASURING, measure_again_at__lt=timezone.now() - timedelta(seconds=lost_after)
    ).select_related("exercise_version")
    resent = 0
    for submission in overdue:
        if in_broker is not None and submission.id in in_broker:
            continue
        with submission_logging(submission.id):
            log.warning("measure-again task missing from the broker; sending it again")
        resent += submission_send(submission)
    return resent
