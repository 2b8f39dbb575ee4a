"""Assignment and Grade Services: a counted verdict sends the student's score to the placed link's
line item in the LMS (lti1p3platform's, over HTTP), and the instructor's page shows how it went."""

import pytest
from django.test import Client

from courses.models import Course
from courses.services import item_add
from lti.models import GradeSync
from lti.tasks import send_grade
from quizzes.models import Bank
from quizzes.services import quiz_content_sync, quiz_finish, quiz_start_bank
from tests.platform import classroom as make
from tests.platform.lti.conftest import launch
from tests.platform.lti.lms import DEEP_LINK

pytestmark = pytest.mark.django_db


@pytest.fixture
def placed(lms):
    """A course made by the instructor's launch, an exercise placed in it, opened once by the student."""
    teacher = Client()
    launch(teacher, lms, "teacher", DEEP_LINK)
    course = Course.objects.get()
    exercise = make.exercise("graph-ex")
    _assignment, item = make.assignment(course, exercise, points=10)
    link = lms.add_link("Graph exercise", {"graphdojo_item": str(item.pk)}, score_maximum=10)
    launch(Client(), lms, "student", link.id)
    student = course.memberships.get(role="student").user
    return teacher, course, exercise, link, student


def test_a_counted_verdict_queues_its_score_after_the_commit_and_the_lms_receives_it(
    lms, placed, django_capture_on_commit_callbacks
):
    teacher, course, exercise, link, student = placed
    with django_capture_on_commit_callbacks() as callbacks:
        make.graded(student, exercise, score=0.5, verdict="PARTIAL")
    sync = GradeSync.objects.get()
    assert sync.state == GradeSync.State.PENDING
    assert any(getattr(c, "func", None) == send_grade.delay for c in callbacks)

    send_grade.apply(args=[sync.pk])

    [score] = lms.scores_for(link)
    assert score["userId"] == "sub-student"
    assert score["scoreGiven"] == 5.0 and score["scoreMaximum"] == 10.0
    assert score["gradingProgress"] == "FullyGraded"
    sync.refresh_from_db()
    assert sync.state == GradeSync.State.SENT
    page = teacher.get(f"/lti/courses/{course.pk}/").content.decode()
    assert 'data-state="sent"' in page and "5 / 10" in page


def test_the_best_counted_score_is_sent_not_the_latest(lms, placed):
    _teacher, _course, exercise, link, student = placed
    make.graded(student, exercise, score=1.0)
    make.graded(student, exercise, score=0.2, verdict="PARTIAL")
    send_grade.apply(args=[GradeSync.objects.get().pk])
    assert [s["scoreGiven"] for s in lms.scores_for(link)] == [10.0]


def test_a_platform_failure_sends_nothing(lms, placed):
    _teacher, _course, exercise, _link, student = placed
    make.graded(student, exercise, score=0.0, verdict="INTERNAL_ERROR")  # stored FAILED: ours, not the student's
    assert not GradeSync.objects.exists()


def test_an_lms_that_refuses_is_retried_and_the_failure_and_its_reason_are_shown(lms, placed, settings):
    teacher, course, exercise, link, student = placed
    make.graded(student, exercise, score=1.0)
    lms.refuse_scores_with = 503

    send_grade.apply(args=[GradeSync.objects.get().pk])

    sync = GradeSync.objects.get()
    assert sync.state == GradeSync.State.FAILED
    assert sync.tries == send_grade.max_retries + 1
    assert ": 503 - " in sync.reason and "refused by the test" in sync.reason
    assert lms.scores_for(link) == []
    page = teacher.get(f"/lti/courses/{course.pk}/").content.decode()
    assert 'data-state="failed"' in page and "refused by the test" in page


def test_the_grades_page_is_the_courses_staffs_alone(lms, placed):
    _teacher, course, _exercise, _link, student = placed
    outsider = make.user("outsider")
    for user in (student, outsider):
        client = Client()
        client.force_login(user)
        assert client.get(f"/lti/courses/{course.pk}/").status_code == 404


def test_a_closed_quiz_sends_its_score_too(lms, content_dir):
    launch(Client(), lms, "teacher", DEEP_LINK)
    course = Course.objects.get()
    quiz_content_sync(content_dir)
    bank = Bank.objects.order_by("pk").first()
    assignment, _ = make.assignment(course)
    item = item_add(assignment=assignment, kind="quiz", target=bank, points=10)
    link = lms.add_link(bank.title_en, {"graphdojo_item": str(item.pk)}, score_maximum=10)
    launch(Client(), lms, "student", link.id)
    student = course.memberships.get(role="student").user

    attempt = quiz_start_bank(user=student, bank=bank, timed=False)
    quiz_finish(user=student, attempt_id=attempt.pk)  # nothing answered: 0 points, counted
    send_grade.apply(args=[GradeSync.objects.get(link__item=item).pk])

    [score] = lms.scores_for(link)
    assert score["userId"] == "sub-student" and score["scoreGiven"] == 0.0 and score["scoreMaximum"] == 10.0
