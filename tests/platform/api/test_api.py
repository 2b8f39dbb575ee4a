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
    """schemathesis generates requests for every operation, inside the schema and (negative
    data) outside it, and runs every check it has on each response: status codes, content
    types, bodies, headers, a value the schema forbids refused with 4xx, one it allows accepted
    (issue 28: ``?difficulty=AAA`` answered 200, an empty ``code`` was allowed by the schema and
    refused by the endpoint). Driven by hand, one hypothesis run per operation and mode: its
    pytest plugin does not run on pytest 9."""
    from schemathesis.checks import CHECKS
    from schemathesis.generation import GenerationMode
    from schemathesis.specs.openapi import checks as openapi_checks

    from config.wsgi import application

    graded("starter", user=token.user)
    assert openapi_checks.negative_data_rejection  # importing the module registers the OpenAPI checks
    every_check = CHECKS.get_all()
    assert {c.__name__ for c in every_check} >= {
        "negative_data_rejection", "positive_data_acceptance", "response_schema_conformance", "not_a_server_error"
    }
    # As Django's test client does: a finished request must not close the test's connection.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        schema = schemathesis.openapi.from_wsgi("/api/schema/", application)
        headers = {"Authorization": f"Token {token.key}"}
        operations = [result.ok() for result in schema.get_all_operations()]
        assert {op.path for op in operations} >= {"/api/v1/exercises/", "/api/v1/submissions/{id}/"}
        for operation in operations:
            inputs = [p.name for p in operation.iter_parameters() if p.name not in ("Authorization", "sessionid")]
            # Negative data needs something to break: an operation with no input but its
            # credentials (the quiz list) has none.
            for mode in GenerationMode if inputs or operation.body else [GenerationMode.POSITIVE]:

                @hypothesis.given(case=operation.as_strategy(generation_mode=mode))
                @hypothesis.settings(
                    max_examples=15, deadline=None, database=None, suppress_health_check=list(hypothesis.HealthCheck)
                )
                def keeps_its_word(case):
                    with django_capture_on_commit_callbacks(execute=False):  # a generated submission is never graded
                        case.call_and_validate(headers=headers, checks=every_check)

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


def test_values_outside_the_schema_are_refused_not_ignored(client, exercise, token):
    """Issue 28: ?difficulty=AAA answered 200 with [], ?page=null 200, and "   " as code was
    valid by the schema but refused by the endpoint."""
    exercises = reverse("api:exercise_list")
    assert client.get(exercises, {"difficulty": "AAA"}, **auth(token)).status_code == 400
    assert client.get(exercises, {"difficulty": ""}, **auth(token)).status_code == 400
    assert client.get(exercises, {"difficulty": "easy"}, **auth(token)).status_code == 200
    board = reverse("api:leaderboard", args=[exercise.slug])
    for page in ("null", "0", "-1", "1.5", ""):
        assert client.get(board, {"page": page}, **auth(token)).status_code == 400, page
    assert client.get(board, {"page": "2"}, **auth(token)).status_code == 200
    code = client.get(reverse("api:schema"), {"format": "json"}).json()["components"]["schemas"]["Submit"]
    assert code["properties"]["code"]["pattern"]
    response = client.post(reverse("api:submit", args=[exercise.slug]), {"code": "  \n"},
                           content_type="application/json", **auth(token))
    assert response.status_code == 400 and "empty" in response.json()["code"][0]


def test_my_submissions_newest_first(client, exercise, token, graded, make_user):
    first, second = graded("starter", user=token.user), graded("accepted", user=token.user)
    graded("accepted", user=make_user("someone-else"))
    body = client.get(reverse("api:submission_list"), **auth(token)).json()
    assert [s["id"] for s in body] == [second.pk, first.pk]
    assert body[0]["verdict"] == "ACCEPTED" and body[0]["exercise"] == exercise.slug
    assert client.get(reverse("api:submission_list"), {"exercise": "other"}, **auth(token)).json() == []
    assert client.get(reverse("api:submission_list"), {"limit": "1"}, **auth(token)).json()[0]["id"] == second.pk
