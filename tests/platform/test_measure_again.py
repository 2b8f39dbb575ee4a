"""A grading whose speed did not settle is measured again once, later (grading.measure_again):
shown as "measuring again", counted nowhere meanwhile, and the last attempt's verdict stored.

The judge's verdicts are injected (the judge itself is tested in tests/grader); what is
tested here is what the platform does with a verdict that says "measure again"."""
import copy
import json
from datetime import timedelta

import pytest
from celery import current_app
from django.urls import reverse
from django.utils import timezone

from grader.host import Verdict
from grading.dispatch import GRADE_TASK, SUBMISSION_JOB
from grading.jobs import Claim, Progress, job_claim
from grading.measure_again import measure_again_sweep
from grading.models import Submission
from grading.services import submission_requeue
from grading.signals import submission_graded
from grading.tasks import sweep_submissions
from grading.work import submission_grade
from leaderboards.models import Entry
from tests.platform.conftest import VERDICTS

pytestmark = pytest.mark.django_db
ACCEPTED = json.loads((VERDICTS / "accepted_with_message_ids.json").read_text())


def verdict(*, unsettled: list[str], decision: str = "undecided", ratio: float = 2.9) -> Verdict:
    """A right submission's verdict whose one speed case went ``decision``."""
    document = copy.deepcopy(ACCEPTED)
    for row in document["checks"]:  # the fixture is a stored format-3 result; a fresh one has these
        row.update(title={}, expected=None, got=None, line=None)
    if decision == "too_slow":
        row = next(r for r in document["checks"] if r["name"] == "plan_once_run_many")
        row.update(passed=False, points=0.0, kind="TOO_SLOW")
        document.update(verdict="TOO_SLOW", score=13 / 15)
    case = document["perf"]["cases"][0]
    case.update(decision=decision, ratio=ratio, interval=[ratio * 0.8, ratio * 1.25])
    document["unsettled"] = unsettled
    return Verdict.from_dict(document)


@pytest.fixture
def judge(monkeypatch, settings):
    """The judge replaced by a list of verdicts, one per grading; records each grading's attempt."""
    settings.SANDBOX_BACKEND = "local"
    attempts: list[str] = []
    verdicts: list[Verdict] = []

    def grade(spec, code, sandbox, *, attempt="only"):
        attempts.append(attempt)
        return verdicts.pop(0)

    monkeypatch.setattr("grading.work.grade", grade)
    monkeypatch.setattr("grading.work.grading_sandbox", lambda: None)
    return attempts, verdicts


@pytest.fixture
def sent(monkeypatch):
    """The broker replaced by a list of grading messages: (task args, queue, countdown)."""
    messages: list[tuple] = []

    def send_task(name, args=None, kwargs=None, countdown=None, queue=None, **options):  # as Celery calls it
        if name == GRADE_TASK:  # not the boards' re-measuring a new best asks for
            messages.append((args, queue, countdown))

    monkeypatch.setattr(current_app, "send_task", send_task)
    return messages


@pytest.fixture
def announced():
    """Verdicts announced to the boards and the gradebook (grading.signals.submission_graded)."""
    seen: list[str] = []

    def receiver(sender, submission, **kwargs):
        seen.append(submission.status)

    submission_graded.connect(receiver)
    yield seen
    submission_graded.disconnect(receiver)


def submission_of(exercise, make_user):
    return Submission.objects.create(user=make_user(), exercise_version=exercise.current_version, code="x = 1\n")


def test_an_unsettled_speed_is_shown_as_measuring_again_and_counted_nowhere(
    exercise, make_user, judge, sent, announced, settings, django_capture_on_commit_callbacks
):
    settings.GRADING_MEASURE_AGAIN_AFTER_S = 90
    attempts, verdicts = judge
    verdicts.append(verdict(unsettled=["undecided"]))
    submission = submission_of(exercise, make_user)
    with django_capture_on_commit_callbacks(execute=True):
        submission_grade(submission_id=submission.id)
    submission.refresh_from_db()
    assert attempts == ["first"]
    assert (submission.status, submission.verdict, submission.score, submission.result) == (
        Submission.Status.MEASURING, "", None, None)
    assert SUBMISSION_JOB.progress_of(submission) is Progress.MEASURING
    assert submission.measure_again_at > timezone.now() + timedelta(seconds=80)
    assert sent == [((submission.id,), "cpu", 90)]  # the same queue, later
    assert announced == [] and not Entry.objects.exists()


def test_the_measure_again_is_the_last_attempt_and_its_verdict_replaces_the_wait(
    exercise, make_user, judge, sent, announced, django_capture_on_commit_callbacks
):
    attempts, verdicts = judge
    verdicts += [verdict(unsettled=["busy"], decision="pass"), verdict(unsettled=[], decision="pass", ratio=1.4)]
    submission = submission_of(exercise, make_user)
    with django_capture_on_commit_callbacks(execute=True):
        submission_grade(submission_id=submission.id)
        assert submission_grade(submission_id=submission.id) is Claim.DONE  # not due yet: a redelivery waits
        Submission.objects.filter(id=submission.id).update(measure_again_at=timezone.now() - timedelta(seconds=1))
        submission_grade(submission_id=submission.id)
    submission.refresh_from_db()
    assert attempts == ["first", "last"]
    assert (submission.status, submission.verdict, submission.score) == (Submission.Status.GRADED, "ACCEPTED", 1.0)
    assert submission.result["perf"]["cases"][0]["ratio"] == 1.4
    assert announced == [Submission.Status.GRADED]
    assert Entry.objects.get().ratio == pytest.approx(1.4)


def test_a_grading_is_measured_again_at_most_once(exercise, make_user, judge, sent, django_capture_on_commit_callbacks):
    attempts, verdicts = judge
    # A last attempt never asks again; were it to, the platform would not listen.
    verdicts += [verdict(unsettled=["undecided"]), verdict(unsettled=["undecided"], decision="too_slow")]
    submission = submission_of(exercise, make_user)
    with django_capture_on_commit_callbacks(execute=True):
        submission_grade(submission_id=submission.id)
        Submission.objects.filter(id=submission.id).update(measure_again_at=timezone.now())
        submission_grade(submission_id=submission.id)
    submission.refresh_from_db()
    assert attempts == ["first", "last"] and len(sent) == 1
    assert submission.status == Submission.Status.GRADED


def test_a_measure_again_reclaimed_from_a_dead_worker_is_still_the_last_attempt(
    exercise, make_user, judge, sent, settings, django_capture_on_commit_callbacks
):
    attempts, verdicts = judge
    verdicts += [verdict(unsettled=["undecided"]), verdict(unsettled=[], decision="too_slow", ratio=4.0)]
    submission = submission_of(exercise, make_user)
    with django_capture_on_commit_callbacks(execute=True):
        submission_grade(submission_id=submission.id)
        past = timezone.now() - timedelta(seconds=settings.SUBMISSION_STALE_AFTER_S + 1)
        # Its worker took it and died: its lease lapses, and the next claim takes it.
        Submission.objects.filter(id=submission.id).update(status=Submission.Status.RUNNING, started_at=past,
                                                          lease_until=timezone.now() - timedelta(seconds=1))
        assert job_claim(SUBMISSION_JOB, submission.id)[0] is Claim.TAKEN
        Submission.objects.filter(id=submission.id).update(status=Submission.Status.QUEUED)
        submission_grade(submission_id=submission.id)
    assert attempts == ["first", "last"]
    assert Submission.objects.get(id=submission.id).verdict == "TOO_SLOW"


def test_the_sweep_resends_a_measure_again_whose_message_was_lost(exercise, make_user, sent):
    submission = submission_of(exercise, make_user)
    Submission.objects.filter(id=submission.id).update(
        status=Submission.Status.MEASURING, measure_again_at=timezone.now() + timedelta(seconds=60))
    assert measure_again_sweep() == 0  # not due yet: its countdown message is on its way
    Submission.objects.filter(id=submission.id).update(measure_again_at=timezone.now() - timedelta(hours=1))
    assert sweep_submissions()["measured_again"] == 1
    assert sent[-1] == ((submission.id,), "cpu", None)


def test_a_regrade_may_measure_again(exercise, make_user):
    submission = submission_of(exercise, make_user)
    Submission.objects.filter(id=submission.id).update(
        status=Submission.Status.GRADED, measure_again_at=timezone.now(), finished_at=timezone.now())
    assert submission_requeue(submission.id, graded_before=timezone.now() + timedelta(seconds=1))
    assert Submission.objects.get(id=submission.id).measure_again_at is None


@pytest.mark.parametrize("language, words", [("en", "Measuring again: the machine was busy"),
                                              ("zh-hans", "重新测量：机器繁忙")])
def test_the_page_and_the_api_say_measuring_again_in_both_languages(client, exercise, make_user, language, words):
    student = make_user()
    submission = Submission.objects.create(user=student, exercise_version=exercise.current_version, code="x = 1\n",
                                           status=Submission.Status.MEASURING, measure_again_at=timezone.now())
    client.force_login(student)
    client.cookies["django_language"] = language
    page = client.get(reverse("submissions:status", args=[submission.pk]), HTTP_ACCEPT_LANGUAGE=language)
    api = client.get(f"/api/v1/submissions/{submission.pk}/", HTTP_ACCEPT_LANGUAGE=language)
    html = page.content.decode()
    assert words in html and 'id="measuring-again"' in html
    assert 'hx-trigger="every 1s"' in html  # still polled: the verdict comes later
    body = api.json()
    assert (body["status"], body["finished"], body["verdict"], body["headline"]) == ("measuring", False, "", words)
