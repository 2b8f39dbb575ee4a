"""What the site does with hostile or hurried browsers: a body in a charset Django refuses,
a form posted twice, submissions past the limits, guessed passwords; and production's HTTPS."""
from __future__ import annotations

import uuid

import pytest
from django.urls import reverse

from grading.models import Submission
from tests.platform.test_settings import settings_under

pytestmark = pytest.mark.django_db
SOLUTION = "def answer():\n    return 42\n"


@pytest.fixture
def student_client(client, make_user):
    client.force_login(make_user())
    return client


@pytest.fixture
def no_publish(django_capture_on_commit_callbacks):
    """The grading task is not sent (no worker here); the row is what these tests look at."""
    with django_capture_on_commit_callbacks(execute=False):
        yield


def create_url(exercise) -> str:
    return reverse("submissions:create", args=[exercise.slug])


def test_a_form_in_a_charset_django_refuses_gets_a_400_page(student_client, exercise):
    for url in (create_url(exercise), reverse("login")):
        response = student_client.post(url, data=b"code=caf%E9",
                                       content_type="application/x-www-form-urlencoded; charset=latin-1")
        assert response.status_code == 400
        assert "The site could not understand that request" in response.content.decode()
    assert not Submission.objects.exists()


def test_the_same_form_posted_twice_is_one_submission(student_client, exercise, no_publish):
    form = {"code": SOLUTION, "idempotency_key": "4f0c1e5e0a9d4b7e8c2d1f3a5b6c7d8e"}
    first = student_client.post(create_url(exercise), form)
    second = student_client.post(create_url(exercise), form)
    assert first.status_code == second.status_code == 302 and first.url == second.url
    assert Submission.objects.count() == 1
    assert student_client.post(create_url(exercise), {**form, "idempotency_key": "another"}).status_code == 302
    assert Submission.objects.count() == 2


def test_the_exercise_page_gives_every_form_its_own_key(student_client, exercise):
    pages = [student_client.get(reverse("submissions:exercise_detail", args=[exercise.slug])).content.decode()
             for _ in range(2)]
    keys = [page.split('name="idempotency_key" value="')[1].split('"')[0] for page in pages]
    assert all(len(key) == 32 for key in keys) and keys[0] != keys[1]


@pytest.mark.parametrize(("limit", "message"), [
    ("SUBMISSIONS_IN_FLIGHT_MAX", "waiting for a verdict"),
    ("SUBMISSIONS_PER_MINUTE_MAX", "in the last minute"),
])
def test_past_a_limit_a_submission_is_refused_with_a_reason(student_client, exercise, settings, no_publish,
                                                            limit, message):
    settings.SUBMISSIONS_IN_FLIGHT_MAX = 100
    setattr(settings, limit, 2)
    for _ in range(2):
        assert student_client.post(create_url(exercise), {"code": SOLUTION}).status_code == 302
    if limit == "SUBMISSIONS_PER_MINUTE_MAX":  # finished ones still count a minute
        Submission.objects.update(status=Submission.Status.GRADED)
    response = student_client.post(create_url(exercise), {"code": SOLUTION})
    assert response.status_code == 429
    assert message in response.content.decode()
    assert Submission.objects.count() == 2


def test_repeated_failed_logins_are_throttled(client, make_user, settings):
    settings.LOGIN_FAILURES_ALLOWED = 3
    # Fresh names: the counts live in the shared cache (Redis) for LOGIN_THROTTLE_S.
    user = make_user(f"target-{uuid.uuid4().hex[:8]}")
    for _ in range(3):
        response = client.post(reverse("login"), {"username": user.username, "password": "wrong"})
        assert response.status_code == 200
    refused = client.post(reverse("login"), {"username": user.username, "password": user.raw_password})
    assert refused.status_code == 429 and "Too many failed logins" in refused.content.decode()
    other = make_user(f"bystander-{uuid.uuid4().hex[:8]}")
    welcome = client.post(reverse("login"), {"username": other.username, "password": other.raw_password})
    assert welcome.status_code == 302


def test_logging_in_works_while_the_cache_is_unreachable(client, make_user, settings):
    """Redis down: the brake cannot count, so it lets people in (the password hash still slows
    guessing) instead of answering every login with a server error."""
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                   "LOCATION": "redis://127.0.0.1:1/0"}}  # nothing listens on port 1
    user = make_user(f"patient-{uuid.uuid4().hex[:8]}")
    wrong = client.post(reverse("login"), {"username": user.username, "password": "wrong"})
    assert wrong.status_code == 200 and "password" in wrong.content.decode()
    right = client.post(reverse("login"), {"username": user.username, "password": user.raw_password})
    assert right.status_code == 302


def test_production_https_settings_come_from_the_environment():
    key = "k" * 50
    read = ("; from django.conf import settings as s; print(s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS, "
            "s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_PROXY_SSL_HEADER)")
    import tests.platform.test_settings as module

    original = module.PRINT_SETTINGS
    module.PRINT_SETTINGS = "import django; django.setup()" + read
    try:
        secure = settings_under("config.settings.production", DJANGO_SECRET_KEY=key)
        relaxed = settings_under("config.settings.production", DJANGO_SECRET_KEY=key,
                                 DJANGO_SECURE_SSL_REDIRECT="false", DJANGO_SECURE_HSTS_SECONDS="0",
                                 DJANGO_SECURE_COOKIES="false", DJANGO_BEHIND_TLS_PROXY="true")
    finally:
        module.PRINT_SETTINGS = original
    assert secure.returncode == 0, secure.stderr
    assert secure.stdout.split() == ["True", "31536000", "True", "True", "None"]
    assert relaxed.stdout.split()[:4] == ["False", "0", "False", "False"]
    assert "HTTP_X_FORWARDED_PROTO" in relaxed.stdout


def test_grading_times_out_of_order_are_refused_at_start_up(settings):
    from grading.checks import grading_times_problems

    assert grading_times_problems() == []
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:6379/0"
    settings.SUBMISSION_STALE_AFTER_S = settings.CELERY_VISIBILITY_TIMEOUT_S + 1
    assert any("CELERY_VISIBILITY_TIMEOUT_S" in problem for problem in grading_times_problems())
    settings.GRADING_MAX_S = settings.SUBMISSION_STALE_AFTER_S
    assert any("GRADING_MAX_S" in problem for problem in grading_times_problems())


def test_the_last_retry_of_an_engine_fault_stores_failed_not_counted(exercise, make_user, settings, client):
    from grading.work import submission_grade

    settings.SANDBOX_BACKEND = "docker"
    settings.SANDBOX_IMAGE = "graphdojo-sandbox:no-such-tag"  # engine down or image missing: both unavailable
    user = make_user()
    submission = Submission.objects.create(user=user, exercise_version=exercise.current_version, code="x = 1\n")
    submission_grade(submission_id=submission.id, final_attempt=True)
    submission.refresh_from_db()
    assert (submission.status, submission.score, submission.result["cause"]) == ("failed", None, "sandbox unavailable")
    client.force_login(user)
    page = client.get(reverse("submissions:status", args=[submission.id])).content.decode()
    assert "It is not counted against you" in page
