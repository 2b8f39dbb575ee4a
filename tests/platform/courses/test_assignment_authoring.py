"""Assignment authoring (issue 28): one picker names the item whatever its kind, and open and
due times are typed in the instructor's own time zone and stored in UTC."""
import datetime as dt

import pytest
from django.urls import reverse

from courses.models import Assignment, AssignmentItem
from interviews.models import InterviewTemplate
from interviews.services import interview_templates_sync
from quizzes.models import Bank
from quizzes.services import quiz_content_sync
from tests.platform import classroom as make

pytestmark = pytest.mark.django_db


@pytest.fixture
def authoring(client, content_dir):
    quizzes = quiz_content_sync(content_dir)
    assert not quizzes.errors and not interview_templates_sync(content=quizzes.content).errors
    course = make.course()
    assignment, _ = make.assignment(course, make.exercise("graph-ex"))
    client.force_login(course.memberships.get(role="instructor").user)
    return course, assignment


def add(client, course, assignment, item: str):
    return client.post(reverse("courses:assignment", args=[course.pk, assignment.pk]), {"item": item, "points": 7})


def test_one_picker_adds_an_exercise_a_quiz_or_an_interview(client, authoring):
    course, assignment = authoring
    page = client.get(reverse("courses:assignment", args=[course.pk, assignment.pk])).content.decode()
    assert page.count('<select name="item"') == 1 and 'name="exercise"' not in page and 'name="bank"' not in page
    assert "<optgroup label=\"Quiz\">" in page and "<optgroup label=\"Mock interview\">" in page
    bank, interview = Bank.objects.get(uid="autograd-pitfalls"), InterviewTemplate.objects.first()
    for item in ("exercise:graph-ex", "quiz:autograd-pitfalls", f"interview:{interview.uid}"):
        assert add(client, course, assignment, item).status_code == 302, item
    added = list(assignment.items.order_by("position"))[-3:]
    assert [i.kind for i in added] == ["exercise", "quiz", "interview"]
    assert added[1].bank == bank and added[2].interview == interview and {i.points for i in added} == {7}


@pytest.mark.parametrize("item", ["", "quiz:no-such-bank", "exercise:autograd-pitfalls", "lesson:x", "graph-ex"])
def test_a_wrong_pick_says_what_to_do_and_adds_nothing(client, authoring, item):
    course, assignment = authoring
    before = assignment.items.count()
    response = add(client, course, assignment, item)
    assert response.status_code == 400
    assert "Pick an exercise, a quiz or a mock interview for this item." in response.content.decode()
    assert assignment.items.count() == before


def test_times_typed_in_the_instructors_zone_are_stored_in_utc(client, authoring):
    course, _ = authoring
    form = {"title_en": "Week 2", "title_zh": "", "late_policy": "refuse", "penalty_per_day": 10,
            "opens_at": "2027-03-01T09:00", "due_at": "2027-03-08T23:30", "time_zone": "Asia/Shanghai"}
    response = client.post(reverse("courses:assignment_create", args=[course.pk]), form)
    assert response.status_code == 302
    week = Assignment.objects.get(title_en="Week 2")
    assert week.opens_at == dt.datetime(2027, 3, 1, 1, 0, tzinfo=dt.UTC)
    assert week.due_at == dt.datetime(2027, 3, 8, 15, 30, tzinfo=dt.UTC)
    # Without JavaScript the page sends UTC, and says so.
    page = client.get(reverse("courses:assignment_create", args=[course.pk])).content.decode()
    assert 'name="time_zone" value="UTC"' in page and "Times are in UTC" in page


def test_an_unknown_zone_is_refused_and_nothing_is_stored(client, authoring):
    course, _ = authoring
    form = {"title_en": "Week 3", "title_zh": "", "late_policy": "refuse", "penalty_per_day": 10,
            "opens_at": "2027-03-01T09:00", "due_at": "2027-03-08T23:30", "time_zone": "Mars/Olympus"}
    response = client.post(reverse("courses:assignment_create", args=[course.pk]), form)
    assert response.status_code == 400 and "Unknown time zone Mars/Olympus." in response.content.decode()
    assert not Assignment.objects.filter(title_en="Week 3").exists()
    assert AssignmentItem.objects.count() == 1
