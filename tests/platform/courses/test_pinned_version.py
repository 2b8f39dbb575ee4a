"""An assignment pins an exercise's version: work submitted from the assignment is graded
against that version, not the latest, and moving the assignment to a new version is an
explicit step that grades the counted work again (keeping when it was handed in)."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from courses.models import ItemScore, RegradeJob
from grading.models import Submission
from grading.work import submission_grade
from testbed.processes import docker_is_up
from tests.platform import classroom as make

pytestmark = pytest.mark.django_db

REFUSING_CHECK = '''

@check(points=1)
def only_version_two_has_this_check(student, reference, rng):
    fail({"en": "version 2 asks for more than version 1 did", "zh-hans": "第 2 版比第 1 版要求更多"})
'''


def version_two(exercise):
    """A new current version whose extra check no code passes (not even the reference)."""
    v1 = exercise.current_version
    checks = v1.files["checks.py"].replace("from grader.harness import ", "from grader.harness import fail, ", 1)
    v2 = exercise.versions.get(pk=v1.pk)
    v2.pk, v2.number, v2.digest = None, v1.number + 1, "2" * 64
    v2.files = {**v1.files, "checks.py": checks + REFUSING_CHECK}
    v2.save()
    exercise.current_version = v2
    exercise.save(update_fields=["current_version"])
    return v1, v2


def test_the_assignment_page_submits_to_the_pinned_version_only_for_members(client, exercise):
    student, outsider = make.user(), make.user()
    course = make.course(students=[student])
    _, item = make.assignment(course, exercise)
    v1, v2 = version_two(exercise)
    url = reverse("courses:item_work", args=[course.pk, item.pk])

    client.force_login(outsider)
    assert client.get(url).status_code == 404
    assert client.post(url, {"code": "x = 1\n"}).status_code == 404
    assert not Submission.objects.exists()

    client.force_login(student)
    page = client.get(url)
    assert page.status_code == 200
    text = page.content.decode()
    assert f"version {v1.number}" in text and f"newer version ({v2.number})" in text
    response = client.post(url, {"code": "x = 1\n", "idempotency_key": "k1"})
    submission = Submission.objects.get()
    assert response.url == f"{reverse('submissions:detail', args=[submission.pk])}?back={url.replace('/', '%2F')}"
    verdict = client.get(response.url).content.decode()
    assert f'<a href="{url}" id="back">' in verdict  # the way back stays inside the course
    assert submission.exercise_version == v1  # the pinned version, not the latest
    # The exercise's own page still submits to the latest.
    client.post(reverse("submissions:create", args=[exercise.slug]), {"code": "x = 2\n", "idempotency_key": "k2"})
    assert Submission.objects.get(code="x = 2\n").exercise_version == v2
    # Empty code is refused with the usual message, and nothing is stored.
    refused = client.post(url, {"code": "  ", "idempotency_key": "k3"})
    assert refused.status_code == 400 and Submission.objects.count() == 2


@pytest.mark.docker
def test_pinned_work_is_graded_against_its_version_and_a_move_regrades_it(client, exercise, settings, requires):
    """On Docker: version 2 refuses every code. Work from the assignment (pinned to version 1)
    is accepted and counts; the same code on the exercise's page is graded against version 2
    and does not touch the assignment; the move grades the counted code against version 2,
    keeping the time it was handed in (before the due date, so not refused as late)."""
    requires("Docker engine", docker_is_up(), "start dockerd")
    settings.SANDBOX_BACKEND = "docker"
    settings.SANDBOX_POOL_SIZE = 0
    student = make.user()
    course = make.course(students=[student])
    assignment, item = make.assignment(course, exercise, opens=-3, due=1)
    v1, v2 = version_two(exercise)
    solution = v1.files["solution.py"]

    client.force_login(student)
    client.post(reverse("courses:item_work", args=[course.pk, item.pk]), {"code": solution, "idempotency_key": "a"})
    pinned = Submission.objects.get()
    handed_in = timezone.now() - timedelta(days=2)
    Submission.objects.filter(pk=pinned.pk).update(created_at=handed_in)
    submission_grade(submission_id=pinned.pk)
    pinned.refresh_from_db()
    assert pinned.verdict == "ACCEPTED", pinned.result
    assert pinned.result["exercise"]["version"] == v1.declared_version
    score = ItemScore.objects.get(item=item, user=student)
    assert (score.points, score.attempts) == (10, 1)

    client.post(reverse("submissions:create", args=[exercise.slug]), {"code": solution, "idempotency_key": "b"})
    latest = Submission.objects.exclude(pk=pinned.pk).get()
    submission_grade(submission_id=latest.pk)
    latest.refresh_from_db()
    assert (latest.exercise_version, latest.verdict) == (v2, "PARTIAL")  # the one extra check fails
    score.refresh_from_db()
    assert (score.points, score.attempts) == (10, 1)  # the assignment pins version 1

    # The due date passes; then the instructor moves the item to version 2.
    assignment.opens_at, assignment.due_at = timezone.now() - timedelta(days=3), timezone.now() - timedelta(days=1)
    assignment.save()
    client.force_login(course.memberships.get(role="instructor").user)
    client.post(reverse("courses:item_move_version", args=[course.pk, item.pk]))
    job = RegradeJob.objects.get()
    (moved_id,) = job.submission_ids
    moved = Submission.objects.get(pk=moved_id)
    assert (moved.exercise_version, moved.code, moved.received_at) == (v2, solution, handed_in)
    submission_grade(submission_id=moved.pk)
    moved.refresh_from_db()
    assert moved.verdict == "PARTIAL" and moved.score < 1
    score.refresh_from_db()
    # Graded against version 2, counted as handed in two days ago (on time), not a new attempt.
    assert (score.points, score.late_refused, score.attempts, score.submission_id) == (
        pytest.approx(10 * moved.score),
        0,
        1,
        moved.pk,
    )
