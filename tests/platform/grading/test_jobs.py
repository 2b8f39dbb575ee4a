"""The one job path (grading.jobs): every run of untrusted code is claimed, leased, retried and
stored by one rule, whatever the job: a grading, a practice run, an upload's validation, a
playground run, a board's re-measuring."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from catalog.models import ExerciseUpload
from grading.dispatch import NOT_COUNTED, NOT_VALIDATED, SUBMISSION_JOB, UPLOAD_JOB
from grading.jobs import (
    JOB_TASK_OPTIONS,
    Claim,
    Job,
    JobRetry,
    Outcome,
    PlatformFault,
    job_claim,
    job_store,
    jobs_reclaim,
)
from grading.models import Submission
from grading.signals import submission_graded
from grading.tasks import grade_submission, validate_upload
from grading.work import submission_grade, upload_validate
from leaderboards.models import Verification
from leaderboards.tasks import verify_top
from leaderboards.verification import VERIFICATION_JOB
from lessons.models import PlaygroundRun
from lessons.runs import PLAYGROUND_JOB, playground_run_execute
from lessons.tasks import run_playground
from workbench.models import PracticeRun
from workbench.practice import PRACTICE_JOB, practice_run_grade
from workbench.tasks import run_visible_checks

pytestmark = pytest.mark.django_db
JOB_TASKS = [grade_submission, run_visible_checks, validate_upload, run_playground, verify_top]


@pytest.fixture
def broken_version(exercise):
    """A version of the exercise whose judge fails on every run: INTERNAL_ERROR, a fault of ours."""
    version = exercise.current_version
    version.pk, version.number, version.digest = None, version.number + 1, "0" * 64
    broken = "raise RuntimeError('a broken judge')\n" + version.files["checks.py"]
    version.files = {**version.files, "checks.py": broken}
    version.save()
    return version


def job_of(kind_name: str, version, user):
    """A fresh row of each kind of job, on ``version`` where it has one: (its kind, its id)."""
    if kind_name == "grading":
        row = Submission.objects.create(user=user, exercise_version=version, code=version.files["solution.py"])
        return SUBMISSION_JOB, row.id
    if kind_name == "practice":
        row = PracticeRun.objects.create(user=user, exercise_version=version, code=version.files["solution.py"])
        return PRACTICE_JOB, row.id
    if kind_name == "upload":
        row = ExerciseUpload.objects.create(uploaded_by=user, slug=version.exercise.slug, digest=version.digest,
                                            files=version.files)
        return UPLOAD_JOB, row.id
    if kind_name == "playground":
        return PLAYGROUND_JOB, PlaygroundRun.objects.create(user=user, code="print(1)").id
    return VERIFICATION_JOB, Verification.objects.create(exercise_version=version).id


def run_job(kind_name: str, job_id: int, *, final_attempt: bool) -> None:
    runs = {
        "grading": lambda: submission_grade(submission_id=job_id, final_attempt=final_attempt),
        "practice": lambda: practice_run_grade(practice_id=job_id, final_attempt=final_attempt),
        "upload": lambda: upload_validate(upload_id=job_id, final_attempt=final_attempt),
        "playground": lambda: playground_run_execute(run_id=job_id, final_attempt=final_attempt),
    }
    runs[kind_name]()


def status_of(kind, job_id: int) -> tuple[str, int]:
    return tuple(kind.rows().filter(id=job_id).values_list(kind.status_field, "attempts").get())


def assert_retried_then_stored_as_our_failure(kind_name: str, kind, job_id: int) -> None:
    """The one retry rule, seen from the rows: put back for the task's retry, then, once the
    retries ran out, the kind's platform failure stored with the reason its page shows."""
    with pytest.raises(JobRetry):  # the task retries it, with the one backoff
        run_job(kind_name, job_id, final_attempt=False)
    assert status_of(kind, job_id) == (kind.queued, 1)  # back in the queue, nothing stored

    run_job(kind_name, job_id, final_attempt=True)
    failed = kind.failed(PlatformFault("INTERNAL_ERROR"))
    assert status_of(kind, job_id) == (failed[kind.status_field], 2)
    row = kind.rows().get(id=job_id)
    if kind_name == "grading":  # never charged to the student, and the page says why
        assert (row.verdict, row.score, row.result["notes"][0]) == ("INTERNAL_ERROR", None, NOT_COUNTED)
    elif kind_name == "upload":
        assert (row.error, row.report, row.validated_at is not None) == (NOT_VALIDATED, None, True)
    elif kind_name == "playground":
        assert (row.failure, row.result, row.finished_at is not None) == (PlaygroundRun.Failure.UNAVAILABLE, None, True)
    else:
        assert (row.result, row.finished_at is not None) == (None, True)


@pytest.mark.parametrize("kind_name", ["grading", "practice"])
def test_the_same_internal_error_is_retried_the_same_way_for_grading_and_practice(
    kind_name, broken_version, make_user, settings
):
    settings.SANDBOX_BACKEND = "local"
    kind, job_id = job_of(kind_name, broken_version, make_user())
    assert_retried_then_stored_as_our_failure(kind_name, kind, job_id)


@pytest.mark.parametrize("kind_name", ["grading", "practice", "upload", "playground"])
def test_an_unavailable_sandbox_is_retried_the_same_way_for_every_job(kind_name, exercise, make_user, settings):
    settings.SANDBOX_BACKEND = "docker"
    settings.SANDBOX_IMAGE = "graphdojo-sandbox:no-such-tag"  # engine down or image missing: both unavailable
    kind, job_id = job_of(kind_name, exercise.current_version, make_user(role="instructor"))
    assert_retried_then_stored_as_our_failure(kind_name, kind, job_id)


def test_an_upload_whose_own_checks_raise_is_invalid_at_once_never_retried(broken_version, make_user, settings):
    """An upload's checks and reference are the code under test: their crash (which the judge
    reports as INTERNAL_ERROR) is the author's, like a student's own crash, not ours."""
    settings.SANDBOX_BACKEND = "local"
    kind, job_id = job_of("upload", broken_version, make_user(role="instructor"))
    run_job("upload", job_id, final_attempt=False)  # no JobRetry
    upload = ExerciseUpload.objects.get(id=job_id)
    assert (upload.status, upload.attempts, upload.error) == (ExerciseUpload.Status.INVALID, 1, "")
    assert {run["got"] for run in upload.report["runs"]} == {"INTERNAL_ERROR"}


def test_every_job_task_retries_by_the_one_rule():
    for task in JOB_TASKS:
        assert task.autoretry_for == (JobRetry,), task.name
        assert (task.max_retries, task.retry_backoff, task.retry_backoff_max) == (
            JOB_TASK_OPTIONS["max_retries"], JOB_TASK_OPTIONS["retry_backoff"], JOB_TASK_OPTIONS["retry_backoff_max"]
        ), task.name
        assert task.acks_late and task.reject_on_worker_lost, task.name


@pytest.mark.parametrize("kind_name", ["grading", "practice", "playground"])
def test_a_students_own_crash_is_stored_at_once_and_never_retried(kind_name, exercise, make_user, settings):
    settings.SANDBOX_BACKEND = "local"
    kind, job_id = job_of(kind_name, exercise.current_version, make_user())
    kind.rows().filter(id=job_id).update(code="raise RuntimeError('my own bug')\n")

    run_job(kind_name, job_id, final_attempt=False)  # no JobRetry: their crash is an outcome

    status, attempts = status_of(kind, job_id)
    assert (kind.progress[status].value, attempts) == ("done", 1)
    row = kind.rows().get(id=job_id)
    if kind_name == "grading":
        assert row.verdict == "RUNTIME_ERROR"
    elif kind_name == "practice":
        assert row.result["verdict"] == "RUNTIME_ERROR"
    else:
        assert "my own bug" in row.result["stderr"]


def test_a_duplicate_delivery_stores_once(exercise, make_user, settings):
    settings.SANDBOX_BACKEND = "local"
    kind, job_id = job_of("grading", exercise.current_version, make_user())
    announced: list[int] = []

    def receiver(sender, submission, **kwargs) -> None:
        announced.append(submission.id)

    submission_graded.connect(receiver)
    try:
        assert submission_grade(submission_id=job_id, final_attempt=False) is Claim.TAKEN
        first = Submission.objects.get(id=job_id)
        assert submission_grade(submission_id=job_id, final_attempt=False) is Claim.DONE  # the same message again
        # And a second store by the attempt that stored already (a retried store) is refused.
        assert not job_store(Job(kind, job_id, first.attempts), Outcome({"status": Submission.Status.GRADED,
                                                                         "verdict": "WRONG_ANSWER", "score": 0.0}))
    finally:
        submission_graded.disconnect(receiver)
    again = Submission.objects.get(id=job_id)
    assert announced == [job_id]
    assert (again.verdict, again.attempts, again.finished_at) == (first.verdict, 1, first.finished_at)
    assert first.verdict == "ACCEPTED"


@pytest.mark.parametrize("kind_name", ["grading", "practice", "upload", "playground", "verification"])
def test_a_lapsed_lease_is_reclaimed_and_the_old_attempt_stores_nothing(kind_name, exercise, make_user):
    kind, job_id = job_of(kind_name, exercise.current_version, make_user(role="instructor"))
    assert job_claim(kind, job_id) == (Claim.TAKEN, 1)
    assert job_claim(kind, job_id) == (Claim.BUSY, 1)  # its worker renews the lease: not run twice
    assert jobs_reclaim(kind) == []

    kind.rows().filter(id=job_id).update(lease_until=timezone.now() - timedelta(seconds=1))  # its worker died
    assert jobs_reclaim(kind) == [job_id]
    assert status_of(kind, job_id) == (kind.queued, 2)

    late = Outcome(kind.failed(PlatformFault("the first worker, back from the dead")))
    assert not job_store(Job(kind, job_id, 1), late)
    assert job_claim(kind, job_id) == (Claim.TAKEN, 3)
    assert status_of(kind, job_id) == (kind.running, 3)


def test_a_re_measuring_put_back_while_a_newer_one_waits_is_superseded_by_it(exercise):
    version = exercise.current_version
    dead = Verification.objects.create(exercise_version=version)
    assert job_claim(VERIFICATION_JOB, dead.id).claim is Claim.TAKEN
    waiting = Verification.objects.create(exercise_version=version)  # a newer request (one pending per version)
    Verification.objects.filter(id=dead.id).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert jobs_reclaim(VERIFICATION_JOB) == []
    statuses = dict(Verification.objects.values_list("id", "status"))
    assert statuses == {dead.id: Verification.Status.SUPERSEDED, waiting.id: Verification.Status.PENDING}


@pytest.mark.parametrize("kind", [SUBMISSION_JOB, PRACTICE_JOB, UPLOAD_JOB, PLAYGROUND_JOB, VERIFICATION_JOB],
                         ids=lambda kind: kind.name)
def test_every_state_a_job_can_be_in_reads_as_one_progress(kind):
    field = kind.model._meta.get_field(kind.status_field)
    assert set(kind.progress) == {value for value, _label in field.choices}
