"""The submission lifecycle as a student sees it: the form, the queue, the stored verdict."""
import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from grader.host import SandboxUnavailable
from grading.dispatch import SUBMISSION_JOB
from grading.jobs import Claim, JobRetry, job_claim
from grading.models import Submission
from grading.services import submission_create
from grading.signals import submission_graded
from grading.work import submission_grade

pytestmark = pytest.mark.django_db


@pytest.fixture
def student_client(client, make_user):
    client.force_login(make_user())
    return client


def post_code(client, exercise, code):
    return client.post(reverse("submissions:create", args=[exercise.slug]), {"code": code})


def test_a_submission_is_saved_queued_and_enqueued_on_commit(
        student_client, exercise, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = post_code(student_client, exercise, "class StaticGraph: pass\n")
    submission = Submission.objects.get()
    assert response.status_code == 302 and response.url == reverse("submissions:detail", args=[submission.pk])
    assert submission.status == Submission.Status.QUEUED
    assert submission.exercise_version == exercise.current_version
    assert len(callbacks) == 1  # the grading task is sent only once the row is committed


@pytest.mark.parametrize(
    ("code", "message"),
    [("", "Your submission is empty"), ("   \n\t\n", "Your submission is empty"),
     ("x = 1\n" * 200_000, "the limit is 65536 bytes"), ("x = 1\x00\n", "UTF-8 text without NUL")],
    ids=["empty", "blank", "1MB", "nul"],
)
def test_a_bad_form_gets_a_clear_error_and_stores_nothing(student_client, exercise, code, message):
    response = post_code(student_client, exercise, code)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Submission.objects.exists()


@pytest.mark.parametrize(
    ("code", "reason"),
    [("", "empty"), ("\n \t", "empty"), ("x" * 65_537, "size"), ("é" * 32_769, "size"),
     ("x = '\ud800'", "encoding"), ("\x00", "encoding")],
    ids=["empty", "blank", "one-byte-over", "multibyte-over", "lone-surrogate", "nul"],
)
def test_submission_create_refuses_code_it_cannot_grade_with_one_message(exercise, make_user, code, reason):
    with pytest.raises(ValidationError) as refused:
        submission_create(user=make_user(), exercise=exercise, code=code)
    assert refused.value.code == reason and len(refused.value.messages) == 1
    assert not Submission.objects.exists()


def test_code_at_the_size_limit_is_accepted(exercise, make_user, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        submission = submission_create(user=make_user(), exercise=exercise, code="#" * 65_536)
    assert submission.status == Submission.Status.QUEUED


def test_claiming_is_idempotent(exercise, make_user):
    submission = Submission.objects.create(user=make_user(), exercise_version=exercise.current_version, code="x")
    assert job_claim(SUBMISSION_JOB, submission.id) == (Claim.TAKEN, 1)
    assert job_claim(SUBMISSION_JOB, submission.id) == (Claim.BUSY, 1)  # a redelivered task finds it taken
    submission.refresh_from_db()
    assert (submission.status, submission.attempts) == (Submission.Status.RUNNING, 1)


def test_a_graded_submission_is_not_graded_again(exercise, make_user, settings):
    settings.SANDBOX_BACKEND = "local"
    submission = Submission.objects.create(
        user=make_user(), exercise_version=exercise.current_version, code="def broken(:\n"
    )
    submission_grade(submission_id=submission.id)
    submission.refresh_from_db()
    assert (submission.status, submission.verdict) == (Submission.Status.GRADED, "SYNTAX_ERROR")
    assert submission.score == 0
    finished_at = submission.finished_at
    submission_grade(submission_id=submission.id)  # redelivered
    submission.refresh_from_db()
    assert (submission.attempts, submission.finished_at) == (1, finished_at)


def test_the_reference_solution_is_accepted(exercise, make_user, settings):
    settings.SANDBOX_BACKEND = "local"
    solution = exercise.current_version.files["solution.py"]
    submission = Submission.objects.create(user=make_user(), exercise_version=exercise.current_version, code=solution)
    submission_grade(submission_id=submission.id)
    submission.refresh_from_db()
    assert submission.verdict == "ACCEPTED", submission.result
    assert submission.score == 1
    assert submission.result["checks"] and all(check["passed"] for check in submission.result["checks"])


def test_a_stored_verdict_is_announced_inside_its_transaction(exercise, make_user, settings):
    """Receivers (leaderboards) see the stored row, and a receiver's failure undoes the verdict."""
    settings.SANDBOX_BACKEND = "local"
    submission = Submission.objects.create(
        user=make_user(), exercise_version=exercise.current_version, code="def broken(:\n"
    )
    seen = []

    def receiver(sender, submission, **kwargs):
        seen.append((sender, submission.status, submission.verdict, submission.finished_at is not None))
        raise RuntimeError("a receiver failed")

    submission_graded.connect(receiver)
    try:
        with pytest.raises(RuntimeError):
            submission_grade(submission_id=submission.id)
    finally:
        submission_graded.disconnect(receiver)
    assert seen == [(Submission, Submission.Status.GRADED, "SYNTAX_ERROR", True)]
    submission.refresh_from_db()
    assert (submission.status, submission.verdict) == (Submission.Status.RUNNING, "")  # rolled back with it


def test_another_students_submission_is_not_shown(client, exercise, make_user):
    owner, other = make_user("owner"), make_user("other")
    submission = Submission.objects.create(user=owner, exercise_version=exercise.current_version, code="x")
    client.force_login(other)
    assert client.get(reverse("submissions:detail", args=[submission.pk])).status_code == 404
    assert client.get(reverse("submissions:status", args=[submission.pk])).status_code == 404


def test_an_unavailable_sandbox_puts_the_submission_back_for_a_retry(exercise, make_user, settings):
    settings.SANDBOX_BACKEND = "docker"
    settings.SANDBOX_IMAGE = "graphdojo-sandbox:no-such-tag"  # engine down or image missing: both unavailable
    submission = Submission.objects.create(user=make_user(), exercise_version=exercise.current_version, code="x = 1\n")
    with pytest.raises(JobRetry) as retry:
        submission_grade(submission_id=submission.id, final_attempt=False)
    assert isinstance(retry.value.__cause__, SandboxUnavailable)
    submission.refresh_from_db()
    assert (submission.status, submission.verdict, submission.result) == (Submission.Status.QUEUED, "", None)
    assert job_claim(SUBMISSION_JOB, submission.id)[0] is Claim.TAKEN  # the retry can take it again


def test_a_platform_fault_is_retried_and_never_charged_to_the_student(exercise, make_user, settings):
    settings.SANDBOX_BACKEND = "local"
    version = exercise.current_version
    version.pk, version.number, version.digest = None, version.number + 1, "0" * 64
    broken = "raise RuntimeError('a broken judge')\n" + version.files["checks.py"]
    version.files = {**version.files, "checks.py": broken}
    version.save()
    solution = version.files["solution.py"]
    submission = Submission.objects.create(user=make_user(), exercise_version=version, code=solution)

    with pytest.raises(JobRetry):
        submission_grade(submission_id=submission.id, final_attempt=False)
    submission.refresh_from_db()
    assert (submission.status, submission.score) == (Submission.Status.QUEUED, None)

    submission_grade(submission_id=submission.id, final_attempt=True)
    submission.refresh_from_db()
    stored = (submission.status, submission.verdict, submission.score)
    assert stored == (Submission.Status.FAILED, "INTERNAL_ERROR", None)
    assert submission.attempts == 2


def test_the_exercise_page_lists_the_students_own_submissions(client, exercise, make_user):
    owner, other = make_user("owner"), make_user("other")
    graded = Submission.objects.create(user=owner, exercise_version=exercise.current_version, code="x",
                                       status=Submission.Status.GRADED, verdict="WRONG_ANSWER")
    queued = Submission.objects.create(user=owner, exercise_version=exercise.current_version, code="y")
    theirs = Submission.objects.create(user=other, exercise_version=exercise.current_version, code="z")
    client.force_login(owner)
    page = client.get(reverse("submissions:exercise_detail", args=[exercise.slug])).content.decode()
    assert reverse("submissions:detail", args=[graded.pk]) in page and "verdict-wrong_answer" in page
    assert reverse("submissions:detail", args=[queued.pk]) in page and "verdict-queued" in page
    assert reverse("submissions:detail", args=[theirs.pk]) not in page
