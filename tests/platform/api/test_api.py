"""The REST API: token auth, the same permissions as the pages, and the OpenAPI schema held
to its word by schemathesis (every documented operation, generated inputs, responses
checked against the schema)."""

import hypothesis
import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.urls import reverse
from rest_framework.authtoken.models import Token

from grading.models import Submission

pytestmark = pytest.mark.django_db


@pytest.fixture
def token(make_user):
    return Token.objects.create(user=make_user("api-user"))


def auth(token) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Token {token.key}"}


def test_every_endpoint_needs_a_user(client, exercise):
    for url in (
        reverse("api:exercise_list"),
        reverse("api:quiz_list"),
        reverse("api:exercise_detail", args=[exercise.slug]),
    ):
        assert client.get(url).status_code == 401
    assert client.get(reverse("api:schema")).status_code == 200  # the schema itself is public


def test_a_student_submits_and_reads_the_verdict_with_a_token(
    client, exercise, token, django_capture_on_commit_callbacks
):
    listing = client.get(reverse("api:exercise_list"), **auth(token)).json()
    assert listing[0]["difficulty"] == "easy" and {e["slug"] for e in listing} >= {exercise.slug}
    with django_capture_on_commit_callbacks(execute=False):
        created = client.post(
            reverse("api:submit", args=[exercise.slug]),
            {"code": "x = 1\n"},
            content_type="application/json",
            **auth(token),
        )
    assert created.status_code == 201, created.content
    body = created.json()
    assert (body["status"], body["finished"], body["checks"]) == ("queued", False, [])
    submission = Submission.objects.get(pk=body["id"])
    assert submission.user == token.user and submission.code == "x = 1\n"


def test_someone_elses_submission_is_not_found(client, exercise, token, make_user, graded):
    theirs = graded("starter", user=make_user("grace"))
    response = client.get(reverse("api:submission_detail", args=[theirs.pk]), **auth(token))
    assert response.status_code == 404


def test_a_graded_submission_reads_as_on_the_page(client, exercise, token, graded):
    mine = graded("starter", user=token.user)
    body = client.get(reverse("api:submission_detail", args=[mine.pk]), **auth(token)).json()
    assert body["headline"] == "2 of 15 points: 4 visible checks failed, 5 hidden checks failed."
    assert body["checks"][0]["title"] == "Runs the article's perceptron example"


def test_bad_code_is_refused_with_the_pages_message(client, exercise, token, settings):
    settings.SUBMISSION_MAX_BYTES = 10
    response = client.post(
        reverse("api:submit", args=[exercise.slug]), {"code": "x" * 11}, content_type="application/json", **auth(token)
    )
    assert response.status_code == 400 and "the limit is 10 bytes" in response.json()["code"][0]
    assert not Submission.objects.exists()


@pytest.mark.slow
def test_the_api_keeps_to_its_schema(exercise, token, graded, django_capture_on_commit_callbacks):
    """schemathesis generates requests for every operation and checks each response against
    the schema (status codes, content types, bodies). Driven by hand, one hypothesis run per
    operation: its pytest plugin does not run on pytest 9."""
    from config.wsgi import application

    graded("starter", user=token.user)
    # As Django's test client does: a finished request must not close the test's connection.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        schema = schemathesis.openapi.from_wsgi("/api/schema/", application)
        headers = {"Authorization": f"Token {token.key}"}
        operations = [result.ok() for result in schema.get_all_operations()]
        assert {op.path for op in operations} >= {"/api/v1/exercises/", "/api/v1/submissions/{id}/"}
        for operation in operations:

            @hypothesis.given(case=operation.as_strategy())
            @hypothesis.settings(
                max_examples=15, deadline=None, database=None, suppress_health_check=list(hypothesis.HealthCheck)
            )
            def keeps_its_word(case):
                with django_capture_on_commit_callbacks(execute=False):  # a generated submission is never graded
                    case.call_and_validate(headers=headers)

            keeps_its_word()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def test_the_docs_page_serves_swagger_from_our_own_static_files(client):
    page = client.get(reverse("api:docs")).content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in page
    assert "cdn" not in page.lower()


def test_the_leaderboard_is_the_pages_board(client, exercise, token, make_user, graded):
    from grading.models import Submission as Stored
    from grading.signals import submission_graded

    empty = client.get(reverse("api:leaderboard", args=[exercise.slug]), **auth(token)).json()
    assert (empty["total"], empty["rows"], empty["you"]) == (0, [], None)
    mine = graded("accepted", user=token.user)
    submission_graded.send(sender=Stored, submission=mine)  # as grading does when it stores a verdict
    body = client.get(reverse("api:leaderboard", args=[exercise.slug]), **auth(token)).json()
    assert body["total"] == 1 and body["rows"][0]["rank"] == 1 and body["you"]["is_you"] is True
    assert "user_id" not in body["rows"][0] and "real_name" not in body["rows"][0]
    assert client.get(reverse("api:leaderboard", args=["no-such-exercise"]), **auth(token)).status_code == 404
