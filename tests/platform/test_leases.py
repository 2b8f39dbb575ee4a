"""Leases on running work (grading.leases, claimed through grading.jobs): renewed while a worker
runs the job, taken again once they lapse, and a store by an attempt that lost its lease
refused. For gradings, practice runs, upload validations, playground runs and board
re-measurings alike."""
from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from catalog.models import ExerciseUpload
from grading.checks import grading_times_problems
from grading.dispatch import SUBMISSION_JOB, UPLOAD_JOB, submissions_sweep
from grading.jobs import Claim, job_claim
from grading.leases import heartbeat
from grading.models import Submission
from grading.work import submission_grade
from testbed.processes import wait_for
from workbench.models import PracticeRun
from workbench.practice import PRACTICE_JOB, practice_runs_sweep


def lapse(model, row_id: int) -> None:
    """What a worker killed with its job leaves: a lease nobody renews any more, now past."""
    model.objects.filter(id=row_id).update(lease_until=timezone.now() - timedelta(seconds=1))


@pytest.fixture
def submission(exercise, make_user):
    return Submission.objects.create(user=make_user(), exercise_version=exercise.current_version, code="x = 1\n")


@pytest.mark.django_db(transaction=True)
def test_a_running_job_renews_its_lease_until_it_ends(submission, settings):
    settings.GRADING_HEARTBEAT_S = 0.1
    claim, attempt = job_claim(SUBMISSION_JOB, submission.id)
    assert claim is Claim.TAKEN
    first = Submission.objects.get(id=submission.id).lease_until
    assert first is not None and first > timezone.now()
    held = Submission.objects.filter(id=submission.id, status=Submission.Status.RUNNING, attempts=attempt)
    with heartbeat(held, max_s=60) as beat:
        wait_for(lambda: Submission.objects.get(id=submission.id).lease_until > first, 30, "a renewed lease")
    renewals = beat.renewals
    assert renewals >= 1 and not beat.lost
    stopped_at = Submission.objects.get(id=submission.id).lease_until
    settings.GRADING_HEARTBEAT_S = 0.01
    threading.Event().wait(0.2)  # a heartbeat still running would renew many times in this
    assert Submission.objects.get(id=submission.id).lease_until == stopped_at


@pytest.mark.django_db(transaction=True)
def test_a_heartbeat_stops_when_another_attempt_took_the_row(submission, settings):
    settings.GRADING_HEARTBEAT_S = 0.1
    _, attempt = job_claim(SUBMISSION_JOB, submission.id)
    held = Submission.objects.filter(id=submission.id, status=Submission.Status.RUNNING, attempts=attempt)
    lapse(Submission, submission.id)
    assert job_claim(SUBMISSION_JOB, submission.id) == (Claim.TAKEN, attempt + 1)
    with heartbeat(held, max_s=60) as beat:
        wait_for(lambda: beat.lost, 30, "the heartbeat to notice the row is no longer its own")
    assert beat.renewals == 0


@pytest.mark.django_db(transaction=True)
def test_a_heartbeat_gives_up_after_the_jobs_cap(submission, settings):
    """A job that hangs with its worker alive keeps its lease only up to its cap."""
    settings.GRADING_HEARTBEAT_S = 0.1
    _, attempt = job_claim(SUBMISSION_JOB, submission.id)
    held = Submission.objects.filter(id=submission.id, status=Submission.Status.RUNNING, attempts=attempt)
    with heartbeat(held, max_s=0) as beat:
        wait_for(lambda: not beat._thread.is_alive(), 30, "the heartbeat to give up")
    assert beat.renewals == 0 and not beat.lost


@pytest.mark.django_db
def test_a_live_lease_keeps_the_row_and_a_lapsed_one_gives_it_up(submission):
    assert job_claim(SUBMISSION_JOB, submission.id) == (Claim.TAKEN, 1)
    assert job_claim(SUBMISSION_JOB, submission.id) == (Claim.BUSY, 1)  # the worker is alive: its lease holds
    lapse(Submission, submission.id)
    assert job_claim(SUBMISSION_JOB, submission.id) == (Claim.TAKEN, 2)  # its worker died: taken again at once
    row = Submission.objects.get(id=submission.id)
    assert row.status == Submission.Status.RUNNING and row.lease_until > timezone.now()


@pytest.mark.django_db
def test_the_sweep_reclaims_only_rows_whose_lease_lapsed(exercise, make_user, settings):
    settings.GRADING_LEASE_S = 30
    version = exercise.current_version
    dead, alive = (Submission.objects.create(user=make_user(name), exercise_version=version, code="x = 1\n")
                   for name in ("dead", "alive"))
    job_claim(SUBMISSION_JOB, dead.id)
    job_claim(SUBMISSION_JOB, alive.id)
    lapse(Submission, dead.id)
    # Older than any stale time: a long grading whose worker still renews is not taken away.
    Submission.objects.filter(id=alive.id).update(started_at=timezone.now() - timedelta(hours=1))
    counts = submissions_sweep()
    assert counts["reclaimed"] == 1
    dead.refresh_from_db()
    alive.refresh_from_db()
    assert (dead.status, dead.attempts) == (Submission.Status.QUEUED, 2)
    assert (alive.status, alive.attempts) == (Submission.Status.RUNNING, 1)


@pytest.mark.django_db
def test_a_row_from_before_leases_lapses_one_lease_after_it_started(submission, settings):
    Submission.objects.filter(id=submission.id).update(
        status=Submission.Status.RUNNING, attempts=1, lease_until=None,
        started_at=timezone.now() - timedelta(seconds=settings.GRADING_LEASE_S + 5))
    assert job_claim(SUBMISSION_JOB, submission.id) == (Claim.TAKEN, 2)


@pytest.mark.django_db(transaction=True)
def test_a_worker_that_lost_its_lease_cannot_store_over_the_new_attempt(submission, settings):
    """The whole path: a grading whose lease lapses (no heartbeat in time) while it runs is
    taken by another attempt; its verdict, when it comes, is refused."""
    settings.SANDBOX_BACKEND = "local"
    settings.GRADING_HEARTBEAT_S = 3600  # the slow worker never renews
    Submission.objects.filter(id=submission.id).update(code="import time\ntime.sleep(2)\n")
    errors: list[BaseException] = []

    def slow_worker() -> None:
        try:
            submission_grade(submission_id=submission.id)
        except BaseException as error:  # noqa: BLE001 - reported by the test
            errors.append(error)
        finally:
            connection.close()

    worker = threading.Thread(target=slow_worker)
    worker.start()
    wait_for(lambda: Submission.objects.get(id=submission.id).status == Submission.Status.RUNNING, 30,
             "the slow worker to claim the submission")
    lapse(Submission, submission.id)
    assert job_claim(SUBMISSION_JOB, submission.id) == (Claim.TAKEN, 2)
    worker.join(120)
    assert not worker.is_alive() and not errors
    row = Submission.objects.get(id=submission.id)
    assert (row.status, row.attempts, row.verdict, row.result) == (Submission.Status.RUNNING, 2, "", None)


@pytest.mark.django_db
def test_practice_runs_hold_leases_too(exercise, make_user):
    run = PracticeRun.objects.create(user=make_user(), exercise_version=exercise.current_version, code="x = 1\n")
    assert job_claim(PRACTICE_JOB, run.id) == (Claim.TAKEN, 1)
    assert job_claim(PRACTICE_JOB, run.id) == (Claim.BUSY, 1)  # alive: not taken twice
    assert practice_runs_sweep() == 0
    lapse(PracticeRun, run.id)
    assert practice_runs_sweep() == 1
    run.refresh_from_db()
    assert (run.status, run.attempts) == (PracticeRun.Status.QUEUED, 2)
    assert job_claim(PRACTICE_JOB, run.id) == (Claim.TAKEN, 3)


@pytest.mark.django_db
def test_upload_validations_hold_leases_too(make_user):
    upload = ExerciseUpload.objects.create(uploaded_by=make_user(role="instructor"), slug="x", digest="0" * 64,
                                           files={})
    assert job_claim(UPLOAD_JOB, upload.id) == (Claim.TAKEN, 1)
    assert job_claim(UPLOAD_JOB, upload.id) == (Claim.BUSY, 1)
    lapse(ExerciseUpload, upload.id)
    assert submissions_sweep()["uploads_reclaimed"] == 1
    upload.refresh_from_db()
    assert (upload.status, upload.attempts) == (ExerciseUpload.Status.QUEUED, 2)


def test_a_lease_shorter_than_two_heartbeats_is_refused(settings):
    settings.GRADING_LEASE_S, settings.GRADING_HEARTBEAT_S = 10, 5
    assert any("GRADING_LEASE_S" in problem for problem in grading_times_problems())
    settings.GRADING_LEASE_S = 30
    assert not grading_times_problems()


@pytest.mark.django_db
def test_playground_runs_hold_leases_too(make_user):
    from lessons.models import PlaygroundRun
    from lessons.runs import PLAYGROUND_JOB

    run = PlaygroundRun.objects.create(user=make_user(), code="print(1)")
    assert job_claim(PLAYGROUND_JOB, run.id) == (Claim.TAKEN, 1)
    assert job_claim(PLAYGROUND_JOB, run.id) == (Claim.BUSY, 1)  # alive: not run twice
    lapse(PlaygroundRun, run.id)
    assert job_claim(PLAYGROUND_JOB, run.id) == (Claim.TAKEN, 2)


@pytest.mark.django_db
def test_a_board_re_measuring_whose_worker_died_is_put_back_once_its_lease_lapsed(exercise):
    from leaderboards.models import Verification
    from leaderboards.verification import verifications_sweep

    batch = Verification.objects.create(exercise_version=exercise.current_version,
                                        status=Verification.Status.RUNNING, started_at=timezone.now(), attempts=1,
                                        lease_until=timezone.now() + timedelta(seconds=30))
    assert verifications_sweep()["reclaimed"] == 0  # alive: a long batch is not taken away
    lapse(Verification, batch.id)
    assert verifications_sweep()["reclaimed"] == 1
    assert Verification.objects.get(id=batch.id).status == Verification.Status.PENDING
