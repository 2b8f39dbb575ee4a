"""The LMS of these tests is lti1p3platform's platform (tests/platform/lti/lms.py), on 127.0.0.1."""

from urllib.parse import parse_qsl, urlparse

import pytest
from django.apps import apps
from django.test import Client
from lti_tool.models import Key, LtiDeployment, LtiRegistration

from lti.services import keys_rotate
from tests.platform.lti.lms import INSTRUCTOR, LEARNER, Lms


def registration_for(lms: Lms) -> LtiRegistration:
    """What a site administrator enters in the admin for this LMS, and its active deployment."""
    registration = LtiRegistration.objects.create(
        name="Test LMS", issuer=lms.issuer, client_id=lms.client_id, auth_url=f"{lms.url}/authorize",
        token_url=f"{lms.url}/token", keyset_url=f"{lms.url}/jwks",
    )
    LtiDeployment.objects.create(registration=registration, deployment_id=lms.deployment_id, is_active=True)
    return registration


@pytest.fixture
def lms(db):
    """The LMS, registered here, with an instructor and a student; the tool's keys handed to it
    (Django's test client has no address the LMS could fetch them from)."""
    keys_rotate()
    platform = Lms("http://testserver", tool_keyset=Key.objects.as_jwks()).start()
    platform.add_person("teacher", "Pat Teacher", INSTRUCTOR, email="pat@lms.example")
    platform.add_person("student", "Sam Student", LEARNER, email="sam@lms.example")
    registration_for(platform)
    yield platform
    platform.stop()


def preflight(client: Client, lms: Lms, person: str, link: str) -> dict[str, str]:
    """The OIDC login initiation at the tool: it answers with the platform's authorize URL."""
    response = client.get(lms.login_url(person, link))
    assert response.status_code == 302, response.content.decode()[:500]
    location = urlparse(response["Location"])
    assert location.path == "/authorize"
    return dict(parse_qsl(location.query))


def launch(client: Client, lms: Lms, person: str, link: str, **signing):
    """Log in at the tool and post the platform's signed launch, as the browser would."""
    signed = lms.launch(preflight(client, lms, person, link), **signing)
    return client.post("/lti/launch/", {"id_token": signed["id_token"], "state": signed["state"]})


def database_snapshot() -> dict[str, list[dict]]:
    """Every row of the apps a launch could touch."""
    labels = {"accounts", "courses", "lti", "lti_tool", "sessions"}
    return {
        model._meta.label: list(model.objects.order_by("pk").values())
        for model in apps.get_models()
        if model._meta.app_label in labels
    }
