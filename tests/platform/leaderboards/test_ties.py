"""Pseudonyms that do not line up with the roster (issue 24): ties on a board are ordered by
when the best work came in, then by a per-board salt, never by user id or enrolment order;
and a course board shows a pseudonym of that course, not the site-wide one."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from courses.models import Membership
from leaderboards.selectors import course_board, exercise_board
from tests.platform import classroom as make

pytestmark = pytest.mark.django_db


def names(board):
    return [row.name for row in board.rows]


def test_equal_totals_are_ordered_by_when_the_best_came_in_not_by_user_id():
    ex = make.exercise()
    first, second, third = (make.user(f"s{i}") for i in range(3))  # ids in roster order
    course = make.course(students=[first, second, third])
    make.assignment(course, ex, opens=-3)
    now = timezone.now()
    for student, hours_ago in ((third, 30), (first, 20), (second, 10)):
        make.graded(student, ex, score=1.0, created_at=now - timedelta(hours=hours_ago))
    board = course_board(course, viewer=first)
    assert [row.user_id for row in board.rows] == [third.pk, first.pk, second.pk]
    assert {row.rank_label for row in board.rows} == {"=1"}  # still one shared rank


def test_students_with_nothing_yet_are_not_listed_in_enrolment_order():
    students = [make.user(f"r{i:02}") for i in range(24)]  # a roster, alphabetical, ids ascending
    one, two = make.course(students=students), make.course(students=students)
    order_one = [row.user_id for row in course_board(one, viewer=students[0]).rows]
    order_two = [row.user_id for row in course_board(two, viewer=students[0]).rows]
    enrolled = [s.pk for s in students]
    assert sorted(order_one) == enrolled
    assert order_one != enrolled and order_one != enrolled[::-1]
    assert order_one != order_two  # a salt per board: one board's order says nothing of another's
    assert order_one == [row.user_id for row in course_board(one, viewer=students[5]).rows]  # but stable


def test_equal_partial_scores_on_an_exercise_board_follow_the_time_of_the_best():
    ex = make.exercise()
    early, late = make.user("e0"), make.user("e1")
    now = timezone.now()
    make.graded(late, ex, score=0.5, created_at=now - timedelta(hours=1))  # its entry row comes first
    make.graded(early, ex, score=0.5, created_at=now - timedelta(hours=5))
    board = exercise_board(ex, viewer=early)
    assert [row.user_id for row in board.rows] == [early.pk, late.pk]


def test_a_course_board_shows_the_course_pseudonym_which_the_student_chooses(client):
    ex = make.exercise()
    student = make.user("kim", pseudonym="site-wide-name")
    course = make.course(students=[student])
    make.assignment(course, ex)
    make.graded(student, ex, ratio=1.0)
    membership = Membership.objects.get(course=course, user=student)
    assert membership.pseudonym and membership.pseudonym != "site-wide-name"
    client.force_login(student)
    detail = reverse("courses:detail", args=[course.pk])
    assert client.post(detail, {"pseudonym": "ab"}).status_code == 400  # too short
    assert client.post(detail, {"pseudonym": "graphs-in-class"}).status_code == 302
    for url in (reverse("leaderboards:course", args=[course.pk]),
                reverse("leaderboards:exercise_course", args=[ex.slug, course.pk])):
        page = client.get(url).content.decode()
        assert "graphs-in-class" in page and "site-wide-name" not in page
    site = client.get(reverse("leaderboards:exercise", args=[ex.slug])).content.decode()
    assert "site-wide-name" in site and "graphs-in-class" not in site
    classmate = make.user("lee")
    Membership.objects.create(course=course, user=classmate, role="student")
    client.force_login(classmate)
    taken = client.post(detail, {"pseudonym": "Graphs-In-Class"})
    assert taken.status_code == 400 and "Someone else" in taken.content.decode()


def test_the_course_staff_see_the_course_name_not_the_site_wide_one(client):
    student = make.user("noor", pseudonym="site-wide-noor")
    course = make.course(students=[student])
    assistant = make.user("ta")
    Membership.objects.create(course=course, user=assistant, role="assistant")
    client.force_login(assistant)
    page = client.get(reverse("courses:student", args=[course.pk, student.pk])).content.decode()
    assert course.memberships.get(user=student).pseudonym in page and "site-wide-noor" not in page
