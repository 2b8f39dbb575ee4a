"""Dynamic registration (LTI Dynamic Registration 1.0) against the tests' LMS over real HTTP: a site
administrator makes a one-time link, the LMS opens it with its configuration and a registration
token, GraphDojo registers itself there and the LMS here, and the LMS's first launch lands. Every
bad registration (a forged issuer, a wrong token, a spent or unknown link, someone who is not an
administrator) gets a clear page in both languages and changes nothing."""

import html
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from lti_tool.models import Key, LtiDeployment, LtiRegistration

from lti.models import LinkedAccount, RegistrationLink
from lti.registration import SCOPES, TOOL_CONFIGURATION
from lti.services import keys_rotate
from tests.platform import classroom as make
from tests.platform.lti.conftest import database_snapshot, launch
from tests.platform.lti.lms import DEEP_LINK, INSTRUCTOR, Lms

pytestmark = pytest.mark.django_db


@pytest.fixture
def lms():
    """An LMS that registers tools dynamically, not yet registered here."""
    keys_rotate()
    platform = Lms("http://testserver", tool_keyset=Key.objects.as_jwks(), issuer_is_url=True).start()
    platform.add_person("teacher", "Pat Teacher", INSTRUCTOR)
    yield platform
    platform.stop()


@pytest.fixture
def admin_client(django_user_model):
    client = Client()
    client.force_login(django_user_model.objects.create_superuser("root", password="a-long-password-1"))
    return client


def link_made(admin_client: Client, name: str = "Campus LMS") -> str:
    """The administrator's page makes a link and shows it once: its path here."""
    page = admin_client.post("/lti/registrations/", {"name": name}).content.decode()
    [url] = re.findall(r'id="registration-link">.*?<code class="wrap">(http://testserver/lti/register/[^<]+/)</code>',
                       page, re.S)
    return url.removeprefix("http://testserver")


def test_an_lms_registers_itself_with_an_administrators_link_and_its_first_launch_lands(lms, admin_client):
    path = link_made(admin_client)
    assert not LtiRegistration.objects.exists()

    response = Client().get(lms.registration_start_url(path))

    assert response.status_code == 200, response.content.decode()[:800]
    page = response.content.decode()
    assert "org.imsglobal.lti.close" in page and "postMessage" in page
    assert "X-Frame-Options" not in response  # the LMS shows it in its own frame
    registration = LtiRegistration.objects.get()
    assert (registration.name, registration.issuer, registration.client_id) == ("Campus LMS", lms.url, lms.client_id)
    assert (registration.auth_url, registration.token_url, registration.keyset_url) == (
        f"{lms.url}/authorize", f"{lms.url}/token", f"{lms.url}/jwks")
    deployment = LtiDeployment.objects.get()
    assert deployment.registration == registration and deployment.deployment_id == lms.deployment_id
    assert deployment.is_active
    link = RegistrationLink.objects.get()
    assert link.used_at is not None and link.registration == registration

    # What the LMS received: our URLs, both message types, the AGS and NRPS scopes and the claims.
    [client] = lms.tool_registrations
    assert client["initiate_login_uri"] == "http://testserver/lti/login/"
    assert client["redirect_uris"] == ["http://testserver/lti/launch/"]
    assert client["jwks_uri"] == "http://testserver/lti/jwks/"
    assert client["token_endpoint_auth_method"] == "private_key_jwt"
    assert set(client["scope"].split()) == set(SCOPES)
    tool = client[TOOL_CONFIGURATION]
    assert tool["domain"] == "testserver" and tool["target_link_uri"] == "http://testserver/lti/launch/"
    assert {m["type"] for m in tool["messages"]} == {"LtiResourceLinkRequest", "LtiDeepLinkingRequest"}
    assert {"sub", "name"} <= set(tool["claims"])

    # The registration works: the LMS's instructor launches and lands in the course picker.
    landed = launch(Client(), lms, "teacher", DEEP_LINK)
    assert landed.status_code == 302 and landed["Location"].endswith("/pick/")
    assert LinkedAccount.objects.filter(issuer=lms.url, sub="sub-teacher").exists()


def test_a_link_registers_once(lms, admin_client):
    path = link_made(admin_client)
    assert Client().get(lms.registration_start_url(path)).status_code == 200
    before = database_snapshot()

    again = Client().get(lms.registration_start_url(path))

    assert again.status_code == 400
    assert "This registration link is not valid" in again.content.decode()
    assert database_snapshot() == before
    assert len(lms.tool_registrations) == 1


def _forged_issuer(lms: Lms) -> None:
    # The configuration claims an issuer on another host: whoever serves it could name any LMS.
    lms.configured_issuer = "https://lms.test.example"


def _prefix_issuer(lms: Lms) -> None:
    # Another server of the same host vouching for it: a prefix check (``startswith``) lets it through.
    lms.configured_issuer = "http://127.0.0.1"


def _wrong_token(lms: Lms) -> None:
    # The LMS does not take the registration token (wrong, or spent).
    lms.registration_tokens.clear()


BAD = {
    "issuer": (_forged_issuer, "names an issuer on another host", "所声明的签发方"),
    "prefix": (_prefix_issuer, "names an issuer on another host", "所声明的签发方"),
    "token": (_wrong_token, "did not accept GraphDojo's registration", "没有接受 GraphDojo 的注册"),
}


@pytest.mark.parametrize("case", list(BAD))
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_bad_registration_changes_nothing_and_says_why(lms, admin_client, case, language):
    path = link_made(admin_client)
    spoil, english, chinese = BAD[case]
    start = lms.registration_start_url(path)
    spoil(lms)
    before = database_snapshot()

    response = Client(headers={"accept-language": language}).get(start)

    assert response.status_code == 400
    page = html.unescape(response.content.decode())
    heading = "GraphDojo was not registered with your LMS" if language == "en" else "GraphDojo 没有注册到你的 LMS"
    assert heading in page
    assert (english if language == "en" else chinese) in page
    assert database_snapshot() == before  # no registration, no deployment, the link not spent
    assert RegistrationLink.objects.get().used_at is None
    assert not lms.tool_registrations


def test_an_lms_registered_already_is_not_registered_twice(lms, admin_client):
    assert Client().get(lms.registration_start_url(link_made(admin_client))).status_code == 200
    second = link_made(admin_client, "Campus LMS again")
    before = database_snapshot()

    response = Client().get(lms.registration_start_url(second))

    assert response.status_code == 400
    assert "already registered here with the same client id" in response.content.decode()
    assert database_snapshot() == before


def test_after_a_refusal_the_same_link_still_registers(lms, admin_client):
    path = link_made(admin_client)
    lms.configured_issuer = "https://lms.test.example"
    assert Client().get(lms.registration_start_url(path)).status_code == 400
    lms.configured_issuer = None
    assert Client().get(lms.registration_start_url(path)).status_code == 200
    assert LtiRegistration.objects.get().issuer == lms.url


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_an_unknown_or_expired_link_registers_nothing(lms, admin_client, language):
    path = link_made(admin_client)
    RegistrationLink.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    before = database_snapshot()
    for url in [path, "/lti/register/not-a-link-anyone-made/"]:
        response = Client(headers={"accept-language": language}).get(lms.registration_start_url(url))
        assert response.status_code == 400
        text = "This registration link is not valid" if language == "en" else "这个注册链接无效"
        assert text in response.content.decode()
    assert database_snapshot() == before and not lms.tool_registrations


def test_a_link_opened_outside_an_lms_is_not_spent(lms, admin_client):
    path = link_made(admin_client)
    response = Client().get(path)  # a chat app's preview, or someone clicking it
    assert response.status_code == 400
    assert "Open this link from your LMS" in response.content.decode()
    assert RegistrationLink.objects.get().used_at is None


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_only_a_site_administrator_makes_registration_links(lms, language):
    client = Client(headers={"accept-language": language})
    client.force_login(make.user("instructor", role="instructor"))

    for response in [client.get("/lti/registrations/"), client.post("/lti/registrations/", {"name": "Mine"})]:
        assert response.status_code == 403
        page = response.content.decode()
        text = "Only a site administrator makes registration links" if language == "en" else "只有站点管理员"
        assert text in page
    assert not RegistrationLink.objects.exists()
    assert Client().get("/lti/registrations/").status_code == 302  # to the login page


def test_the_administrators_page_lists_registrations_links_and_the_manual_urls(lms, admin_client):
    path = link_made(admin_client, "Campus LMS")
    Client().get(lms.registration_start_url(path))
    page = admin_client.get("/lti/registrations/").content.decode()
    assert lms.url in page and lms.deployment_id in page
    assert "used: Campus LMS" in page
    for url in ["http://testserver/lti/login/", "http://testserver/lti/launch/", "http://testserver/lti/jwks/"]:
        assert url in page
    assert 'id="registration-link"' not in page  # a link's secret is shown once, when it is made
