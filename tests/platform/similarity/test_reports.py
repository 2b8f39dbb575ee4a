"""Similarity reports as instructors use them: fingerprints computed by the task a stored
verdict sends, a report only the course's staff (or site staff) can open, pairs side by side,
and a board entry held for review leaving the ranking until it is released."""

from functools import partial
from pathlib import Path

import pytest
from django.urls import reverse

from courses.models import Membership
from grading.models import Submission
from leaderboards.models import Entry
from leaderboards.selectors import exercise_board, ranked
from similarity.models import Fingerprint
from similarity.tasks import fingerprint_submission
from tests.platform import classroom as make

pytestmark = pytest.mark.django_db

EXERCISES = Path(__file__).resolve().parents[3] / "exercises" / "coding"
ORIGINAL = (EXERCISES / "scalar-autograd" / "solution.py").read_text()
# A disguised copy: every name the program chose renamed, a comment and an unused function added.
COPY = (
    "# my own work\n"
    + ORIGINAL.replace("other", "rhs").replace("out", "res").replace("grad", "g").replace("Value", "Scalar")
    + "\n\ndef helper(a, b=None):\n    if b is None:\n        b = []\n    return b\n"
)
INDEPENDENT = (EXERCISES / "static-graph-executor" / "solution.py").read_text()


def graded_and_fingerprinted(student, ex, code):
    submission = make.graded(student, ex, code=code)
    fingerprint_submission.apply(args=[submission.id])  # what the worker does with the message
    return submission


@pytest.fixture
def classroom():
    ex = make.exercise()
    teacher, helper = make.user(role="instructor"), make.user()
    students = [make.user(f"s{i}", first_name=f"Student{i}") for i in range(4)]
    course = make.course(teacher, students)
    Membership.objects.create(course=course, user=helper, role=Membership.Role.ASSISTANT)
    assignment, _item = make.assignment(course, ex)
    codes = [ORIGINAL, COPY, INDEPENDENT, COPY]
    subs = [graded_and_fingerprinted(s, ex, code) for s, code in zip(students, codes, strict=True)]
    return {"ex": ex, "course": course, "assignment": assignment, "teacher": teacher, "assistant": helper,
            "students": students, "subs": subs}


def report_url(c):
    return reverse("similarity:assignment", args=[c["course"].pk, c["assignment"].pk])


def test_a_stored_verdict_sends_the_task_after_commit_and_the_task_stores_the_fingerprints(
    django_capture_on_commit_callbacks,
):
    ex, student = make.exercise(), make.user()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        submission = make.graded(student, ex, code=ORIGINAL)
    sent = [c for c in callbacks if isinstance(c, partial) and c.func == fingerprint_submission.delay]
    assert [c.args for c in sent] == [(submission.id,)]
    assert not Fingerprint.objects.exists()  # nothing in the verdict's transaction
    fingerprint_submission.apply(args=[submission.id])
    fingerprint_submission.apply(args=[submission.id])  # a redelivered message: the same row
    stored = Fingerprint.objects.get(submission=submission)
    assert len(stored.prints) > 20 and all(len(p) == 3 for p in stored.prints)


def test_a_platform_failure_is_not_fingerprinted():
    ex, student = make.exercise(), make.user()
    submission = make.graded(student, ex, code=ORIGINAL)
    Submission.objects.filter(id=submission.id).update(status=Submission.Status.FAILED)
    fingerprint_submission.apply(args=[submission.id])
    assert not Fingerprint.objects.exists()


def test_the_starter_every_student_was_handed_is_left_out():
    ex = make.exercise()
    ex.current_version.starter = ORIGINAL
    ex.current_version.save()
    submission = graded_and_fingerprinted(make.user(), ex, ORIGINAL)
    assert Fingerprint.objects.get(submission=submission).prints == []


def test_the_instructor_sees_the_copies_paired_and_clustered_and_not_the_independent_code(client, classroom):
    client.force_login(classroom["teacher"])
    page = client.get(report_url(classroom)).content.decode()
    assert page.count('class="pair"') == 3  # 0~1, 0~3, 1~3; the independent program is in none
    assert "Student2" not in page
    assert "Student0" in page and "Student1" in page and "Student3" in page
    assert "Clusters" in page


def test_a_pair_side_by_side_marks_the_matched_lines(client, classroom):
    a, b = classroom["subs"][0], classroom["subs"][1]
    client.force_login(classroom["assistant"])
    url = reverse("similarity:assignment_pair", args=[classroom["course"].pk, classroom["assignment"].pk, a.id, b.id])
    page = client.get(url).content.decode()
    assert page.count("line matched") > 50
    assert "class Scalar:" in page and "class Value:" in page


@pytest.mark.parametrize("who", ["student", "outsider", "other_instructor", "anonymous"])
def test_nobody_else_learns_a_report_exists(client, classroom, who):
    if who == "student":
        client.force_login(classroom["students"][0])
    elif who == "outsider":
        client.force_login(make.user())
    elif who == "other_instructor":
        other = make.user(role="instructor")
        make.course(other)
        client.force_login(other)
    a, b = classroom["subs"][0], classroom["subs"][1]
    course, assignment = classroom["course"].pk, classroom["assignment"].pk
    urls = [
        report_url(classroom),
        reverse("similarity:assignment_pair", args=[course, assignment, a.id, b.id]),
        reverse("similarity:exercise", args=[classroom["ex"].slug]),
    ]
    for url in urls:
        response = client.get(url)
        assert response.status_code in (302, 404), (url, response.status_code)
        if who != "anonymous":
            assert response.status_code == 404
    entry = Entry.objects.get(user=classroom["students"][1])
    response = client.post(reverse("similarity:assignment_hold", args=[course, assignment]), {"entry": entry.id})
    assert response.status_code in (302, 404)
    assert Entry.objects.get(id=entry.id).held_at is None


def test_an_instructor_cannot_open_pairs_outside_the_assignment(client, classroom):
    outsider = graded_and_fingerprinted(make.user(), classroom["ex"], COPY)  # not in the course
    client.force_login(classroom["teacher"])
    course, assignment = classroom["course"].pk, classroom["assignment"].pk
    url = reverse("similarity:assignment_pair", args=[course, assignment, classroom["subs"][0].id, outsider.id])
    assert client.get(url).status_code == 404
    assert client.get(reverse("similarity:exercise", args=[classroom["ex"].slug])).status_code == 404  # site staff only


def test_site_staff_see_the_exercise_report(client, classroom):
    staff = make.user(is_staff=True)
    client.force_login(staff)
    page = client.get(reverse("similarity:exercise", args=[classroom["ex"].slug])).content.decode()
    assert page.count('class="pair"') == 3


def test_a_held_entry_leaves_the_board_until_it_is_released(client, classroom):
    ex, copier = classroom["ex"], classroom["students"][1]
    entry = Entry.objects.get(user=copier)
    assert ranked(ex.current_version_id).filter(id=entry.id).exists()
    client.force_login(classroom["teacher"])
    hold = reverse("similarity:assignment_hold", args=[classroom["course"].pk, classroom["assignment"].pk])
    assert client.post(hold, {"entry": entry.id, "action": "hold"}).status_code == 302
    entry.refresh_from_db()
    assert entry.held_at is not None and entry.held_by == classroom["teacher"]
    names = [row.user_id for row in exercise_board(ex, viewer=classroom["teacher"]).rows]
    assert copier.id not in names and classroom["students"][0].id in names
    assert "held for review" in client.get(report_url(classroom)).content.decode()
    graded_and_fingerprinted(copier, ex, COPY + "\n# again\n")  # resubmitting does not lift the hold
    assert not ranked(ex.current_version_id).filter(user=copier).exists()
    assert client.post(hold, {"entry": entry.id, "action": "release"}).status_code == 302
    assert ranked(ex.current_version_id).filter(user=copier).exists()


def test_an_assistant_sees_the_report_but_cannot_hold(client, classroom):
    client.force_login(classroom["assistant"])
    assert client.get(report_url(classroom)).status_code == 200
    entry = Entry.objects.get(user=classroom["students"][1])
    hold = reverse("similarity:assignment_hold", args=[classroom["course"].pk, classroom["assignment"].pk])
    assert client.post(hold, {"entry": entry.id}).status_code == 404
    assert Entry.objects.get(id=entry.id).held_at is None


def test_the_report_speaks_chinese(client, classroom, settings):
    client.force_login(classroom["teacher"])
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    page = client.get(report_url(classroom)).content.decode()
    assert "相似度" in page and "并排对照" in page and "相似群组" in page and "Side by side" not in page
    course_page = client.get(reverse("courses:assignment", args=[classroom["course"].pk, classroom["assignment"].pk]))
    assert "相似度报告" in course_page.content.decode()
