"""Dynamic registration (IMS LTI Dynamic Registration 1.0): an LMS's administrator pastes a
registration link of ours into the LMS; the LMS opens it with its OpenID configuration's address and
a registration token; we read the configuration, register GraphDojo in the LMS (our login, launch
and key URLs, the messages and the AGS and NRPS scopes we use) and keep the LMS's registration and
deployment in django-lti's rows.

Neither django-lti (0.10.1) nor PyLTI1p3 (2.0.0) does this. The add-on django-lti-dynamic-registration
(0.1.2) was not taken: it checks the issuer with ``startswith`` (``https://lms.example`` would vouch
for ``https://lms.example.evil.test/...``), its generic message type does not serialise, and it
keeps a temporary client id and no deployment. The protocol is two HTTP calls; they are here.

Who may register: the holder of a one-time link that a site administrator made, not a signed-in
administrator. An LMS opens the link in an iframe or a pop-up of its own site, where the browser
sends no Lax (or third-party) session cookie, so a session check would fail there or push the
site's cookie to SameSite=None; and an administrator's session that registers on a framed page can
be clickjacked into registering an attacker's platform. The link carries no ambient authority: it is
made on purpose, by someone who may add registrations, registers one platform once, and expires."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import requests
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy
from lti_tool.models import LtiDeployment, LtiRegistration

from accounts.models import User
from lti.models import RegistrationLink

REGISTRATION_LINK_LIFETIME = timedelta(hours=48)
HTTP_TIMEOUT_S = 10
TOOL_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-tool-configuration"
SCOPES = [
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly",
    "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
    "https://purl.imsglobal.org/spec/lti-ags/scope/score",
    "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly",
]
# The claims a launch should carry: who someone is, by name (accounts are never linked by email).
CLAIMS = ["iss", "sub", "name", "given_name", "family_name", "email"]
# Fields of the platform's OpenID configuration a registration cannot do without.
NEEDED = ["issuer", "authorization_endpoint", "token_endpoint", "jwks_uri", "registration_endpoint"]
PERMISSION = "lti_tool.add_ltiregistration"

REASONS = {
    "link": gettext_lazy(
        "This registration link is not valid: it was never made, was used already or has expired. "
        "Ask a GraphDojo site administrator for a new one."
    ),
    "not-from-lms": gettext_lazy(
        "Open this link from your LMS, where it registers a tool by URL: it came without the address "
        "of the LMS's configuration or without its registration token."
    ),
    "configuration": gettext_lazy("GraphDojo could not read your LMS's configuration."),
    "issuer": gettext_lazy(
        "Your LMS's configuration names an issuer on another host than the address it was read from, "
        "so GraphDojo does not trust it. Nothing was registered."
    ),
    "refused": gettext_lazy(
        "Your LMS did not accept GraphDojo's registration (its registration token may be wrong or "
        "expired). Start the registration again from the LMS."
    ),
    "duplicate": gettext_lazy("This LMS is already registered here with the same client id."),
}


class RegistrationRefused(Exception):
    """A registration that did not happen: the reason in the reader's language, the cause apart."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(kind)
        self.kind = kind
        self.reason = str(REASONS[kind])
        self.detail = detail


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def may_register(user: User) -> bool:
    """Who may make registration links: whoever may add a registration by hand in the admin."""
    return user.is_active and user.has_perm(PERMISSION)


def registration_link_create(*, by: User, name: str) -> tuple[RegistrationLink, str]:
    """A new one-time link for one LMS; the secret is returned once and kept only as a digest."""
    if not may_register(by):
        raise PermissionDenied("only a site administrator makes registration links")
    token = secrets.token_urlsafe(32)
    link = RegistrationLink.objects.create(
        name=name.strip()[:255] or "LMS", token_digest=_digest(token), created_by=by,
        expires_at=timezone.now() + REGISTRATION_LINK_LIFETIME,
    )
    return link, token


@dataclass(frozen=True)
class ToolUrls:
    """Where the LMS finds us: absolute URLs, as the browser that opened the link sees the site."""

    login: str
    launch: str
    jwks: str

    @property
    def domain(self) -> str:
        return urlsplit(self.launch).netloc


def tool_urls(absolute: Any) -> ToolUrls:
    """``absolute`` turns a path into a URL (``request.build_absolute_uri``)."""
    return ToolUrls(
        login=absolute(reverse("lti:login")), launch=absolute(reverse("lti:launch")), jwks=absolute(reverse("lti:jwks"))
    )


def client_registration(urls: ToolUrls) -> dict[str, Any]:
    """The OpenID client registration GraphDojo asks the LMS for (Dynamic Registration 1.0, §3.5)."""
    return {
        "application_type": "web",
        "response_types": ["id_token"],
        "grant_types": ["implicit", "client_credentials"],
        "initiate_login_uri": urls.login,
        "redirect_uris": [urls.launch],
        "client_name": "GraphDojo",
        "jwks_uri": urls.jwks,
        "token_endpoint_auth_method": "private_key_jwt",
        "scope": " ".join(SCOPES),
        TOOL_CONFIGURATION: {
            "domain": urls.domain,
            "target_link_uri": urls.launch,
            "claims": CLAIMS,
            "description": "Computation graphs: exercises graded in a sandbox, quizzes, mock interviews, lessons.",
            "messages": [
                {"type": "LtiResourceLinkRequest", "target_link_uri": urls.launch},
                {"type": "LtiDeepLinkingRequest", "target_link_uri": urls.launch, "label": "GraphDojo",
                 "placements": ["ContentArea"]},
            ],
        },
    }


def platform_configuration(url: str, registration_token: str) -> dict[str, Any]:
    """The LMS's OpenID configuration, trusted only when its issuer is on the host it was read from."""
    try:
        response = requests.get(
            url, headers={"Authorization": f"Bearer {registration_token}", "Accept": "application/json"},
            timeout=HTTP_TIMEOUT_S, allow_redirects=False,  # the host that answers is the host checked below
        )
        response.raise_for_status()
        if response.is_redirect:
            raise requests.RequestException(f"redirected to {response.headers.get('Location', '?')}")
        configuration = response.json()
    except (requests.RequestException, ValueError) as error:
        raise RegistrationRefused("configuration", f"{url}: {error}"[:300]) from error
    if not isinstance(configuration, dict) or any(not configuration.get(key) for key in NEEDED):
        missing = [key for key in NEEDED if not isinstance(configuration, dict) or not configuration.get(key)]
        raise RegistrationRefused("configuration", f"{url}: missing {', '.join(missing)}")
    issuer, source = urlsplit(str(configuration["issuer"])), urlsplit(url)
    # Same scheme and same host and port: a prefix match would let https://lms.example vouch for
    # https://lms.example.evil.test, and another host's configuration could name any issuer.
    if (issuer.scheme, issuer.netloc.lower()) != (source.scheme, source.netloc.lower()):
        raise RegistrationRefused("issuer", f"issuer {configuration['issuer']} read from {url}")
    return configuration


def registration_complete(
    *, token: str, openid_configuration: str, registration_token: str, urls: ToolUrls
) -> LtiRegistration:
    """Register GraphDojo in the LMS and the LMS here; a refusal at any step leaves the link unspent
    and nothing stored."""
    if not openid_configuration or not registration_token:
        raise RegistrationRefused("not-from-lms")
    with transaction.atomic():
        link = (
            RegistrationLink.objects.select_for_update()
            .filter(token_digest=_digest(token), used_at=None, expires_at__gt=timezone.now())
            .first()
        )
        if link is None:
            raise RegistrationRefused("link")
        configuration = platform_configuration(openid_configuration, registration_token)
        answer = _register_in_platform(configuration["registration_endpoint"], registration_token, urls)
        try:
            with transaction.atomic():
                registration = LtiRegistration.objects.create(
                    name=link.name, issuer=configuration["issuer"], client_id=answer["client_id"],
                    auth_url=configuration["authorization_endpoint"], token_url=configuration["token_endpoint"],
                    keyset_url=configuration["jwks_uri"], audience=configuration.get("authorization_server") or "",
                )
        except IntegrityError as error:
            raise RegistrationRefused("duplicate", f"{configuration['issuer']} {answer['client_id']}") from error
        deployment_id = (answer.get(TOOL_CONFIGURATION) or {}).get("deployment_id")
        if deployment_id:
            # The link's maker allowed this LMS; its deployment may launch at once.
            LtiDeployment.objects.create(registration=registration, deployment_id=str(deployment_id), is_active=True)
        link.used_at, link.registration = timezone.now(), registration
        link.save(update_fields=["used_at", "registration"])
    return registration


def _register_in_platform(endpoint: str, registration_token: str, urls: ToolUrls) -> dict[str, Any]:
    try:
        response = requests.post(
            endpoint, json=client_registration(urls), timeout=HTTP_TIMEOUT_S,
            headers={"Authorization": f"Bearer {registration_token}", "Accept": "application/json"},
        )
    except requests.RequestException as error:
        raise RegistrationRefused("refused", f"{endpoint}: {error}"[:300]) from error
    if response.status_code >= 400:
        # The status only: the body of an arbitrary endpoint is not for this page.
        raise RegistrationRefused("refused", f"{endpoint}: HTTP {response.status_code}")
    try:
        answer = response.json()
    except ValueError as error:
        raise RegistrationRefused("refused", f"{endpoint}: the answer is not JSON") from error
    if not isinstance(answer, dict) or not answer.get("client_id"):
        raise RegistrationRefused("refused", f"{endpoint}: the answer has no client_id")
    return answer


def registration_overview() -> tuple[list[LtiRegistration], list[RegistrationLink]]:
    """What the administrators' page lists: the platforms registered, and the links made."""
    registrations = list(LtiRegistration.objects.prefetch_related("deployments").order_by("name", "pk"))
    links = list(RegistrationLink.objects.select_related("registration", "created_by")[:50])
    return registrations, links
