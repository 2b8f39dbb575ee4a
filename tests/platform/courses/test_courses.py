"""Courses as instructors and students use them: create, join, roster, assistants,
assignments with late policy, the gradebook and its export, overrides, regrades, analytics."""

import csv
import io
from datetime import timedelta

import pytest
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from courses.jobs import regrade_job_execute
from courses.models import Course, ItemScore, Membership, RegradeJob, ScoreOverride
from courses.selectors import regrade_progress
from grading.models import Submission
from tests.platform import classroom as make

pytestmark = pytest.mark.django_db


def test_an_instructor_creates_a_course_and_a_student_cannot(client):
    instructor = make.user("prof", role="instructor")
    client.force_login(instructor)
    response = client.post(
        reverse("courses:create"), {"title_en": "Graphs", "title_zh": "计算图", "term": "Spring 2027"}
    )
    course = Course.objects.get()
    assert response.url == reverse("courses:detail", args=[course.pk])
    assert course.memberships.get().role == Membership.Role.INSTRUCTOR
    client.force_login(make.user())
    assert client.post(reverse("courses:create"), {"title_en": "x", "title_zh": "x", "term": "x"}).status_code == 404
    assert Course.objects.count() == 1


def test_a_student_joins_with_the_code_or_the_link_once(client):
    course = make.course()
    student = make.user()
    client.force_login(student)
    wrong = client.post(reverse("courses:join"), {"code": "NOPE1234"})
    assert wrong.status_code == 400 and "No course has this code" in wrong.content.decode()
    assert client.post(reverse("courses:join"), {"code": course.join_code.lower()}).status_code == 302
    link = client.get(reverse("courses:join_code", args=[course.join_code]))
    assert course.join_code in link.content.decode()  # the form comes filled in
    client.post(reverse("courses:join"), {"code": course.join_code})
    assert Membership.objects.filter(course=course, user=student, role="student").count() == 1
    assert "Week" not in client.get(reverse("courses:detail", args=[course.pk])).content.decode()


def test_an_assistant_sees_the_gradebook_but_cannot_change_the_roster(client, django_capture_on_commit_callbacks):
    course = make.course()
    instructor = course.memberships.get().user
    assistant = make.user("ta", email="ta@example.org")
    squatter = make.user("ta-squatter", email="TA@example.org ")  # signed up with the TA's address
    client.force_login(instructor)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("courses:roster", args=[course.pk]), {"who": "ta@example.org"})
    # An assistant is invited too: nobody gets the gradebook by an address typed at sign-up.
    assert not course.memberships.filter(user__in=[assistant, squatter]).exists()
    assert [m.to for m in mail.outbox] == [["ta@example.org"]]
    link = mail.outbox[0].body.split("http://testserver", 1)[1].split()[0]
    client.force_login(assistant)
    assert client.post(link, {"accept": "1"}).status_code == 302
    assert course.memberships.get(user=assistant).role == Membership.Role.ASSISTANT
    assert client.get(reverse("courses:gradebook", args=[course.pk])).status_code == 200
    assert client.post(reverse("courses:roster", args=[course.pk]), {"who": "someone"}).status_code == 404
    assert client.get(reverse("courses:assignment_create", args=[course.pk])).status_code == 404


def test_assignment_times_are_the_servers_and_late_work_follows_the_policy():
    ex = make.exercise()
    on_time, late, early = make.user(), make.user(), make.user()
    course = make.course(students=[on_time, late, early])
    _, refuse = make.assignment(course, ex, opens=-3, due=-1, late_policy="refuse")
    _, penalty = make.assignment(course, ex, opens=-3, due=-1, late_policy="penalty", penalty=25)
    make.graded(on_time, ex, score=1.0, created_at=timezone.now() - timedelta(days=2))
    make.graded(late, ex, score=1.0, created_at=timezone.now() - timedelta(hours=18))  # 6 h late: one day
    make.graded(early, ex, score=1.0, created_at=timezone.now() - timedelta(days=4))  # before it opened
    scores = {(s.item_id, s.user_id): s for s in ItemScore.objects.all()}
    assert scores[refuse.pk, on_time.pk].points == 10 and scores[penalty.pk, on_time.pk].points == 10
    assert scores[refuse.pk, late.pk].points is None and scores[refuse.pk, late.pk].late_refused == 1
    assert (scores[penalty.pk, late.pk].points, scores[penalty.pk, late.pk].days_late) == (7.5, 1)
    assert (refuse.pk, early.pk) not in scores


def test_the_best_counts_and_the_gradebook_reads_in_few_queries(client):
    ex = make.exercise()
    students = [make.user(f"s{i:02}", email=f"s{i}@example.org") for i in range(40)]
    course = make.course(students=students)
    make.assignment(course, ex, points=20)
    for i, s in enumerate(students):
        make.graded(s, ex, score=0.5)
        make.graded(s, ex, score=1.0 if i % 2 else 0.25)
    client.force_login(course.memberships.get(role="instructor").user)
    url = reverse("courses:gradebook", args=[course.pk])
    client.get(url)
    with CaptureQueriesContext(connection) as queries:
        page = client.get(url)
    assert page.status_code == 200 and len(queries) <= 10, [q["sql"] for q in queries]
    exported = client.get(reverse("courses:gradebook_csv", args=[course.pk]))
    rows = list(csv.reader(io.StringIO(exported.content.decode())))
    assert rows[0][:5] == ["Student", "ID", "SIS Login ID", "Email", "Section"] and rows[0][-1] == "Total"
    assert rows[1][0] == "Points Possible" and rows[1][5] == "20"
    by_login = {r[2]: r for r in rows[2:]}
    assert len(by_login) == 40
    assert (by_login["s01"][5], by_login["s00"][5]) == ("20", "10")  # the best of two attempts
    assert ItemScore.objects.get(user=students[0]).attempts == 2


def test_an_override_records_who_when_and_why_and_wins(client):
    ex = make.exercise()
    student = make.user()
    course = make.course(students=[student])
    _, item = make.assignment(course, ex)
    make.graded(student, ex, score=0.5)
    instructor = course.memberships.get(role="instructor").user
    client.force_login(instructor)
    url = reverse("courses:override", args=[course.pk])
    client.post(url, {"item": item.pk, "student": student.pk, "points": "9", "reason": ""})
    assert not ScoreOverride.objects.exists()  # a reason is required
    client.post(url, {"item": item.pk, "student": student.pk, "points": "9", "reason": "checked by hand"})
    override = ScoreOverride.objects.get()
    assert (override.by, override.reason, override.points) == (instructor, "checked by hand", 9)
    assert ItemScore.objects.get().effective == 9
    make.graded(student, ex, score=1.0)  # a later grading does not undo the override
    assert ItemScore.objects.get().effective == 9
    page = client.get(reverse("courses:student", args=[course.pk, student.pk])).content.decode()
    assert "checked by hand" in page and instructor.username in page


def test_a_regrade_job_requeues_each_submission_once_and_shows_progress(client, django_capture_on_commit_callbacks):
    ex = make.exercise()
    students = [make.user() for _ in range(3)]
    course = make.course(students=students)
    _, item = make.assignment(course, ex)
    subs = [make.graded(s, ex, score=0.5) for s in students]
    outsider = make.graded(make.user(), ex, score=0.5)
    client.force_login(course.memberships.get(role="instructor").user)
    with django_capture_on_commit_callbacks(execute=False) as started:
        response = client.post(reverse("courses:regrade", args=[course.pk]), {"item": item.pk})
    job = RegradeJob.objects.get()
    assert response.url == reverse("courses:job", args=[course.pk, job.pk])
    assert sorted(job.submission_ids) == sorted(s.pk for s in subs) and len(started) == 1
    with django_capture_on_commit_callbacks(execute=False) as sent:
        regrade_job_execute(job.pk)
        regrade_job_execute(job.pk)  # a redelivered job sends nothing twice
    assert len(sent) == 3
    assert Submission.objects.get(pk=outsider.pk).status == "graded"
    assert regrade_progress(job).done == 0
    Submission.objects.filter(pk=subs[0].pk).update(status="running")
    make.verdict_store(subs[0].pk, {"verdict": "ACCEPTED", "score": 1.0, "checks": []})
    progress = client.get(reverse("courses:job", args=[course.pk, job.pk]), HTTP_HX_REQUEST="true").content.decode()
    assert 'value="1"' in progress and "hx-trigger" in progress
    assert ItemScore.objects.get(user=students[0]).points == 10  # the regrade of the counted one


def test_moving_an_item_to_a_new_version_is_explicit_and_resubmits(client, django_capture_on_commit_callbacks):
    ex = make.exercise()
    student = make.user()
    course = make.course(students=[student])
    _, item = make.assignment(course, ex)
    make.graded(student, ex, score=1.0, code="mine")
    v2 = make.version_add(ex)
    item.refresh_from_db()
    assert item.exercise_version.number == 1  # pinned until moved
    client.force_login(course.memberships.get(role="instructor").user)
    with django_capture_on_commit_callbacks(execute=False) as queued:
        client.post(reverse("courses:item_move_version", args=[course.pk, item.pk]))
    item.refresh_from_db()
    assert item.exercise_version == v2 and len(queued) == 1
    assert Submission.objects.filter(exercise_version=v2, user=student, code="mine").exists()
    assert ItemScore.objects.get().points is None


def test_the_admin_cannot_change_a_students_code_or_verdict(admin_client):
    ex = make.exercise()
    sub = make.graded(make.user(), ex, score=0.5, code="original")
    url = reverse("admin:grading_submission_change", args=[sub.pk])
    page = admin_client.get(url).content.decode()
    assert 'name="code"' not in page and 'name="verdict"' not in page
    admin_client.post(url, {"code": "hacked", "verdict": "ACCEPTED", "score": "1"})
    sub.refresh_from_db()
    assert (sub.code, sub.verdict, sub.score) == ("original", "PARTIAL", 0.5)


def test_analytics_show_verdicts_failing_checks_and_ratios(client):
    ex = make.exercise()
    students = [make.user() for _ in range(4)]
    course = make.course(students=students)
    make.assignment(course, ex)
    failing = [{"name": "gradients_match", "passed": False}, {"name": "shapes", "passed": True}]
    for i, s in enumerate(students):
        make.graded(s, ex, score=0.0, verdict="WRONG_ANSWER", checks=failing)
        make.graded(s, ex, ratio=1.0 + i)
    client.force_login(course.memberships.get(role="instructor").user)
    page = client.get(reverse("courses:analytics", args=[course.pk]))
    text = page.content.decode()
    assert "gradients_match</td><td>4" in text
    data = page.context["charts"][0]
    assert dict(data["verdicts"]) == {"Wrong answer": 4, "Accepted": 4}  # the names students read
    assert sum(data["ratios"]["counts"]) == 4 and "vendor/chartjs/chart.umd.min.js" in text


def wrong_fields(snapshot: dict) -> dict:
    """A well-formed wrong answer of the question's kind."""
    kind, key, ids = snapshot["type"], snapshot["key"]["answer"], [c["id"] for c in snapshot["choices"]]
    if kind in ("single", "code_output") and ids:
        return {"answer": [next(i for i in ids if i != key)]}
    if kind == "multiple":
        return {"answer": [next(i for i in ids if i not in key)]}
    if kind == "true_false":
        return {"answer": ["false" if key else "true"]}
    if kind == "numeric":
        return {"answer": [f"{key + 1000:g}"]}
    if kind == "ordering":
        return {f"rank-{c}": [str(r)] for r, c in enumerate(reversed(key), start=1)}
    return {"answer": ["something else entirely"]}


def test_a_finished_quiz_counts_and_its_questions_are_analysed(client, content_dir):
    from quizzes.models import Bank
    from quizzes.services import quiz_answer_save, quiz_content_sync, quiz_finish, quiz_start_bank
    from tests.platform.quizzes.test_quizzes import right_fields

    assert not quiz_content_sync(content_dir).errors
    bank = Bank.objects.get(uid="autograd-pitfalls")
    students = [make.user() for _ in range(8)]
    course = make.course(students=students)
    assignment, _ = make.assignment(course)
    item = assignment.items.create(kind="quiz", bank=bank, points=10)
    for i, student in enumerate(students):
        attempt = quiz_start_bank(user=student, bank=bank, timed=False)
        for answer in attempt.items.all():
            # The first question everyone gets right (it separates no one); the rest only the strong half.
            right = answer.position == 1 or i >= 4
            fields = (
                {k: [v] if isinstance(v, str) else v for k, v in right_fields(answer).items()}
                if right
                else wrong_fields(answer.snapshot)
            )
            quiz_answer_save(user=student, attempt_id=attempt.pk, position=answer.position, fields=fields)
        quiz_finish(user=student, attempt_id=attempt.pk)
    scores = dict(ItemScore.objects.filter(item=item).values_list("user_id", "points"))
    assert scores[students[7].pk] == 10 and 0 < scores[students[0].pk] < 10
    client.force_login(course.memberships.get(role="instructor").user)
    page = client.get(reverse("courses:analytics", args=[course.pk]))
    ((_, questions),) = page.context["quizzes"]
    first_uid = bank.question_uids[0]
    by_uid = {q.uid: q for q in questions}
    assert by_uid[first_uid].difficulty == 1.0 and by_uid[first_uid].weak
    other = by_uid[bank.question_uids[1]]
    assert (other.difficulty, other.discrimination) == (0.5, 1.0) and other.wrong_choices
