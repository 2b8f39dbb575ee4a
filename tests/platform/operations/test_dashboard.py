"""What operators see and do: the staff page, Prometheus metrics, requeueing from the admin."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from grading.models import Submission

pytestmark = pytest.mark.django_db


@pytest.fixture
def history(exercise, make_user):
    """Ten verdicts 10..100 s after submit, two failures after 5 s, one queued, one stuck RUNNING."""
    user, now = make_user("kim"), timezone.now()
    version = exercise.current_version

    def row(status, waited=None, **extra):
        submission = Submission.objects.create(user=user, exercise_version=version, code="x", status=status, **extra)
        if waited is not None:
            Submission.objects.filter(id=submission.id).update(
                created_at=now - timedelta(seconds=waited + 60), finished_at=now - timedelta(seconds=60))
        return submission

    for i in range(1, 11):
        row(Submission.Status.GRADED, waited=10 * i, verdict="ACCEPTED", score=1)
    for cause in ("sandbox unavailable", "database unavailable"):
        row(Submission.Status.FAILED, waited=5, verdict="INTERNAL_ERROR",
            result={"verdict": "INTERNAL_ERROR", "cause": cause})
    row(Submission.Status.QUEUED)
    row(Submission.Status.RUNNING, started_at=now - timedelta(hours=2))
    return user


def test_metrics_say_what_the_history_holds(client, history, settings):
    settings.METRICS_TOKEN = "scrape-" + "k" * 32
    text = client.get("/metrics", headers={"authorization": f"Bearer {settings.METRICS_TOKEN}"}).content.decode()
    assert 'graphdojo_submit_to_verdict_seconds{quantile="0.5"} 40.0' in text
    assert 'graphdojo_submit_to_verdict_seconds{quantile="0.95"} 100.0' in text
    assert "graphdojo_gradings_per_minute 1.2" in text  # 12 verdicts in the last 10 minutes
    assert 'graphdojo_failures{cause="sandbox unavailable"} 1' in text
    assert 'graphdojo_submissions{status="queued"} 1' in text and "graphdojo_submissions_stuck 1" in text
    assert 'graphdojo_queue_length{queue="cpu"}' in text


def test_metrics_answer_only_the_scraper_s_token_or_staff(client, history, make_user, settings):
    """Queue lengths, load and failure counts are for operators (issue 24: /metrics was open)."""
    settings.METRICS_TOKEN = "scrape-" + "k" * 32
    anonymous = client.get("/metrics")
    assert anonymous.status_code == 401 and "graphdojo_" not in anonymous.content.decode()
    assert anonymous.headers["WWW-Authenticate"].startswith("Bearer")
    assert client.get("/metrics", headers={"authorization": "Bearer wrong"}).status_code == 401
    client.force_login(history)  # a student
    assert client.get("/metrics").status_code == 401
    staff = make_user("operator", role="instructor")
    staff.is_staff = True
    staff.save()
    client.force_login(staff)
    assert "graphdojo_submissions" in client.get("/metrics").content.decode()
    settings.METRICS_TOKEN = ""  # no token set: staff only, an empty bearer opens nothing
    client.logout()
    assert client.get("/metrics", headers={"authorization": "Bearer "}).status_code == 401


def test_the_operations_page_is_for_staff(client, history, make_user):
    client.force_login(history)
    assert client.get(reverse("operations:dashboard")).status_code == 302  # to the admin login
    from accounts.services import user_set_role

    staff = make_user("root", role="instructor")
    user_set_role(staff, staff.role)
    client.force_login(staff)
    page = client.get(reverse("operations:dashboard")).content.decode()
    assert "40.0 s / 100.0 s" in page and "sandbox unavailable: 1" in page


def test_the_admin_requeues_failed_and_stuck_submissions(admin_client, history, django_capture_on_commit_callbacks):
    failed = list(Submission.objects.filter(status=Submission.Status.FAILED).values_list("id", flat=True))
    graded = Submission.objects.filter(status=Submission.Status.GRADED).first()
    with django_capture_on_commit_callbacks(execute=False) as sends:
        response = admin_client.post(reverse("admin:grading_submission_changelist"),
                                     {"action": "retry", "_selected_action": [*failed, graded.id]})
    assert response.status_code == 302
    assert set(Submission.objects.filter(id__in=failed).values_list("status", "result")) == {("queued", None)}
    graded.refresh_from_db()
    assert graded.status == "graded"  # a verdict is never thrown away
    assert sends  # the student's next grading is sent once committed
