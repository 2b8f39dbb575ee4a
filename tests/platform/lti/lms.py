"""An LMS for the tests, built on lti1p3platform (an LTI 1.3 platform implementation no one here
wrote): it starts the OIDC login, signs launches and deep-linking requests, serves its JWKS and an
OAuth2 token endpoint, keeps a gradebook of the scores posted to its line items (AGS), takes
deep-linking responses and answers roster requests (NRPS), over real HTTP on 127.0.0.1.

Dynamic registration (IMS LTI Dynamic Registration 1.0) is not in lti1p3platform; its platform side
here is written from the spec, as small as it can be: an OpenID configuration, a registration
endpoint that takes a one-time registration token, and an administrator's page that opens the tool's
registration link in a frame and records the close message the tool posts to it."""

from __future__ import annotations

import base64
import html
import itertools
import json
import secrets
import threading
import typing as t
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlencode, urlparse

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from lti1p3platform.exceptions import LineItemNotFoundException
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.membership import Context
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request, TRequest
from lti1p3platform.score import UpdateScoreStatus
from lti1p3platform.service_connector import AssignmentsGradesService, NamesRoleProvisioningService

LIS = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
INSTRUCTOR = [LIS + "Instructor"]
LEARNER = [LIS + "Learner"]
DEEP_LINK = "deeplink"
TOOL_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-tool-configuration"


def rsa_pem_pair() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()
    return private, public


@dataclass
class Person:
    sub: str
    name: str
    roles: list[str]
    email: str = ""


@dataclass
class Link:
    id: str
    title: str
    custom: dict[str, str] = field(default_factory=dict)
    lineitem: str | None = None  # id in Lms.lineitems


class _Request(Request):
    def build_metadata(self, request: t.Any) -> TRequest:
        return t.cast(TRequest, request)


class _Config(LTI1P3PlatformConfAbstract):
    def init_platform_config(self, **kwargs: t.Any) -> None:
        self.registration_given = kwargs["registration"]

    def get_registration_by_params(self, **kwargs: t.Any) -> Registration:
        return self.registration_given


class _Login(OIDCLoginAbstract):
    def set_lti_message_hint(self, **kwargs: t.Any) -> None:
        self._lti_message_hint = kwargs["hint"]

    def get_redirect(self, url: str) -> str:
        return url


class _Launch(LTIAdvantageMessageLaunchAbstract):
    def render_launch_form(self, launch_data: dict[str, t.Any], **kwargs: t.Any) -> dict[str, str]:
        return launch_data  # the handler renders it; unit tests post it with Django's client


def launch_form(launch: dict[str, str]) -> str:
    """The page that posts a launch to the tool, as an LMS's browser receives it."""
    return (
        f'<html><body><form id="f" method="post" action="{html.escape(launch["launch_url"])}">'
        f'<input type="hidden" name="id_token" value="{launch["id_token"]}">'
        f'<input type="hidden" name="state" value="{html.escape(launch["state"])}"></form>'
        '<script>document.getElementById("f").submit()</script></body></html>'
    )


def register_tool_page(start_url: str) -> str:
    """An LMS administrator's page that registers a tool by URL: the tool's page in a frame, closed
    (and the message kept) when the tool posts org.imsglobal.lti.close to it."""
    return (
        "<html><body><h1>Register a tool</h1>"
        f'<iframe id="tool" src="{html.escape(start_url)}" style="width:100%;height:600px"></iframe>'
        "<script>window.addEventListener('message', function (event) {"
        "  if (!event.data || event.data.subject !== 'org.imsglobal.lti.close') return;"
        "  fetch('/admin/register-tool/closed', {method: 'POST', headers: {'Content-Type': 'application/json'},"
        "    body: JSON.stringify(event.data)}).then(function () {"
        "      document.getElementById('tool').remove();"
        "      document.querySelector('h1').textContent = 'Tool registered';"
        "  });"
        "});</script></body></html>"
    )


class Lms:
    """One course in one LMS, with the people and links a test gives it."""

    issuer = "https://lms.test.example"
    client_id = "graphdojo-client"
    deployment_id = "deployment-1"
    context_id = "course-v1:graphs"
    context_title = "Graphs 101"

    def __init__(self, tool_url: str, *, tool_keyset: dict | None = None, host: str = "127.0.0.1",
                 issuer_is_url: bool = False) -> None:
        self.tool_url = tool_url.rstrip("/")
        self.tool_keyset = tool_keyset
        self.private_key, self.public_key = rsa_pem_pair()
        self.people: dict[str, Person] = {}
        self.links: dict[str, Link] = {}
        self.lineitems: dict[str, dict] = {}
        self.scores: list[dict] = []  # every score POST received, with its line item id
        self.content_items: list[dict] = []
        self.refuse_scores_with: int | None = None  # an HTTP status to answer score posts with
        self.launches_expire_in = 300  # seconds; negative: the browser gets an expired launch
        self._numbers = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        # ``host`` names the address as the tool's pages do ("localhost" beside a live server on it), so
        # that the browser's cookies of a plain-HTTP test are same-site as a real LMS's are over HTTPS.
        self.url = f"http://{host}:{self._server.server_address[1]}"
        if issuer_is_url:  # as an LMS that registers tools dynamically is: its issuer is where it is
            self.issuer = self.url
        self.configured_issuer: str | None = None  # the issuer its OpenID configuration names, if not its own
        self.registration_tokens: set[str] = set()  # one-time tokens the registration endpoint takes
        self.tool_registrations: list[dict] = []  # every client registration a tool posted and we took
        self.close_messages: list[dict] = []  # what the tool's registration page posted to our frame
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # -- life ---------------------------------------------------------------------------------

    def start(self) -> Lms:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def add_person(self, key: str, name: str, roles: list[str], email: str = "") -> Person:
        self.people[key] = Person(sub=f"sub-{key}", name=name, roles=roles, email=email)
        return self.people[key]

    def add_link(self, title: str, custom: dict[str, str] | None = None, score_maximum: float | None = None) -> Link:
        link = Link(id=f"rl-{next(self._numbers)}", title=title, custom=dict(custom or {}))
        if score_maximum is not None:
            link.lineitem = f"li-{next(self._numbers)}"
            self.lineitems[link.lineitem] = {
                "id": f"{self.url}/lineitems/{link.lineitem}", "label": title, "scoreMaximum": score_maximum,
                "resourceLinkId": link.id,
            }
        self.links[link.id] = link
        return link

    def start_url(self, person: str, link: str = DEEP_LINK) -> str:
        """Where a person clicks in the LMS: the OIDC login initiation of one link."""
        return f"{self.url}/start?user={person}&link={link}"

    def registration_start_url(self, tool_registration_url: str) -> str:
        """The tool's registration link as the LMS opens it: with our configuration's address and a
        fresh one-time registration token."""
        token = secrets.token_urlsafe(16)
        self.registration_tokens.add(token)
        query = urlencode({"openid_configuration": f"{self.url}/.well-known/openid-configuration",
                           "registration_token": token})
        return f"{tool_registration_url}?{query}"

    def openid_configuration(self) -> dict[str, t.Any]:
        """The platform's OpenID configuration (Dynamic Registration 1.0, §3.4)."""
        return {
            "issuer": self.configured_issuer or self.issuer,
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "jwks_uri": f"{self.url}/jwks",
            "registration_endpoint": f"{self.url}/register",
            "token_endpoint_auth_methods_supported": ["private_key_jwt"],
            "token_endpoint_auth_signing_alg_values_supported": ["RS256"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public", "pairwise"],
            "scopes_supported": ["openid", "https://purl.imsglobal.org/spec/lti-ags/scope/score",
                                 "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"],
            "claims_supported": ["iss", "sub", "name", "given_name", "family_name", "email"],
            "https://purl.imsglobal.org/spec/lti-platform-configuration": {
                "product_family_code": "lti1p3platform-tests", "version": "0.1.8",
                "messages_supported": [{"type": "LtiResourceLinkRequest"}, {"type": "LtiDeepLinkingRequest"}],
            },
        }

    def take_registration(self, authorization: str, client: t.Any) -> tuple[int, dict[str, t.Any]]:
        """The registration endpoint (§3.5): a valid one-time token and a complete LTI tool client."""
        token = authorization.removeprefix("Bearer ").strip()
        if token not in self.registration_tokens:
            return 401, {"error": "invalid_token"}
        tool = (client or {}).get(TOOL_CONFIGURATION) or {}
        needed = [client.get("initiate_login_uri"), client.get("redirect_uris"), client.get("jwks_uri"),
                  tool.get("domain"), tool.get("target_link_uri")] if isinstance(client, dict) else [None]
        if not all(needed) or "id_token" not in client.get("response_types", []):
            return 400, {"error": "invalid_client_metadata"}
        self.registration_tokens.discard(token)
        self.tool_registrations.append(client)
        return 200, {**client, "client_id": self.client_id,
                     TOOL_CONFIGURATION: {**tool, "deployment_id": self.deployment_id}}

    def scores_for(self, link: Link) -> list[dict]:
        return [s for s in self.scores if s["lineitem"] == link.lineitem]

    # -- the platform, through lti1p3platform ------------------------------------------------

    def registration(self, *, issuer: str | None = None, client_id: str | None = None,
                     private_key: str | None = None) -> Registration:
        registration = (
            Registration()
            .set_iss(issuer or self.issuer)
            .set_client_id(client_id or self.client_id)
            .set_deployment_id(self.deployment_id)
            .set_oidc_login_url(f"{self.tool_url}/lti/login/")
            .set_launch_url(f"{self.tool_url}/lti/launch/")
            .set_deeplink_launch_url(f"{self.tool_url}/lti/launch/")
            .set_platform_public_key(self.public_key)
            .set_platform_private_key(private_key or self.private_key)
        )
        if self.tool_keyset is not None:
            registration.set_tool_key_set(self.tool_keyset)
        else:
            registration.set_tool_key_set_url(f"{self.tool_url}/lti/jwks/")
        return registration

    def config(self, **registration: t.Any) -> _Config:
        config = _Config(registration=self.registration(**registration))
        config.get_registration()
        return config

    def login_url(self, person: str, link: str = DEEP_LINK) -> str:
        """The tool's OIDC login initiation URL for a person opening a link."""
        login = _Login(_Request({}), self.config())
        login.set_lti_message_hint(hint=link)
        return login.initiate_login(person)

    def launch(self, preflight: dict[str, str], *, expires_in: int = 300, **registration: t.Any) -> dict[str, str]:
        """The launch the platform answers the tool's authentication request with: id_token and
        state (and where to post them), signed by lti1p3platform."""
        person = self.people[preflight["login_hint"]]
        link_id = preflight.get("lti_message_hint", DEEP_LINK)
        request = _Request({"method": "GET", "get_data": dict(preflight), "form_data": {}, "headers": {}})
        launch = _Launch(request, self.config(**registration))
        launch.set_id_token_expiration(expires_in)
        launch.set_user_data(person.sub, person.roles, full_name=person.name, email_address=person.email or None)
        launch.set_launch_context_claim(
            self.context_id, ["http://purl.imsglobal.org/vocab/lis/v2/course#CourseOffering"],
            self.context_title, "GRAPHS-1",
        )
        launch.set_nrps(f"{self.url}/memberships")
        if link_id == DEEP_LINK:
            launch.set_dl(f"{self.url}/deep-link-return", title="GraphDojo")
        else:
            link = self.links[link_id]
            launch.set_resource_link_claim(link.id, title=link.title)
            if link.custom:
                launch.set_custom_parameters_claim(link.custom)
            launch.set_ags(
                f"{self.url}/lineitems",
                f"{self.url}/lineitems/{link.lineitem}" if link.lineitem else None,
                allow_creating_lineitems=True,
            )
        return t.cast(dict[str, str], launch.lti_launch())  # validates the preflight, signs

    # -- HTTP -----------------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        lms = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: t.Any) -> None:
                pass

            def _send(self, status: int, body: str | bytes, content_type: str = "text/html; charset=utf-8",
                      headers: dict[str, str] | None = None) -> None:
                data = body.encode() if isinstance(body, str) else body
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _request(self, body: bytes = b"") -> _Request:
                parsed = urlparse(self.path)
                content_type = self.headers.get("Content-Type", "")
                form = dict(parse_qsl(body.decode())) if "form-urlencoded" in content_type else {}
                payload = json.loads(body) if body and "json" in content_type else None
                return _Request({
                    "method": self.command, "get_data": dict(parse_qsl(parsed.query)), "form_data": form,
                    "headers": dict(self.headers.items()), "content_type": content_type, "path": parsed.path,
                    "json": payload,
                })

            def do_GET(self) -> None:
                request = self._request()
                path = request.path
                if path == "/start":
                    query = request.get_data
                    self._send(302, "", headers={"Location": lms.login_url(query["user"], query["link"])})
                elif path == "/authorize":
                    self._send(200, launch_form(lms.launch(request.get_data, expires_in=lms.launches_expire_in)))
                elif path == "/jwks":
                    self._send(200, json.dumps(lms.config().get_jwks()), "application/json")
                elif path == "/memberships":
                    self._service_reply(_Roster(request, lms.config(), f"{lms.url}/memberships", lms=lms)
                                        .handle_get_members())
                elif path == "/.well-known/openid-configuration":
                    self._send(200, json.dumps(lms.openid_configuration()), "application/json")
                elif path == "/admin/register-tool":
                    self._send(200, register_tool_page(lms.registration_start_url(request.get_data["url"])))
                elif path == "/gradebook":
                    self._send(200, json.dumps(lms.scores), "application/json")
                else:
                    self._send(404, "not here")

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                request = self._request(body)
                path = request.path
                if path == "/token":
                    try:
                        token = lms.config().get_access_token(request.form_data)
                    except Exception as error:  # the platform's refusal, as a client sees it
                        self._send(400, json.dumps({"error": str(error)}), "application/json")
                        return
                    self._send(200, json.dumps(token), "application/json")
                elif path.startswith("/lineitems/") and path.endswith("/scores"):
                    if lms.refuse_scores_with is not None:
                        self._send(lms.refuse_scores_with, json.dumps({"error": "refused by the test"}),
                                   "application/json")
                        return
                    lineitem = path.split("/")[2]
                    service = _Grades(request, lms.config(), f"{lms.url}/lineitems", lms=lms)
                    self._service_reply(service.handle_resp(service.handle_update_score, line_item_id=lineitem))
                elif path == "/register":
                    status, answer = lms.take_registration(self.headers.get("Authorization", ""), request.json)
                    self._send(status, json.dumps(answer), "application/json")
                elif path == "/admin/register-tool/closed":
                    lms.close_messages.append(request.json)
                    self._send(204, "")
                elif path == "/deep-link-return":
                    items = lms.config().validate_deeplinking_resp({"JWT": request.form_data["JWT"]})
                    lms.content_items.extend(items)
                    placed = [lms.place(item) for item in items]
                    listing = "".join(
                        f'<li>{html.escape(link.title)}: ' + " ".join(
                            f'<a href="{lms.start_url(key, link.id)}">open as {key}</a>' for key in lms.people
                        ) + "</li>"
                        for link in placed
                    )
                    self._send(200, f"<html><body><h1>Placed in the LMS</h1><ul>{listing}</ul></body></html>")
                else:
                    self._send(404, "not here")

            def _service_reply(self, response: t.Any) -> None:
                content = response.result.get("content", response.result) if response.result else {
                    "message": response.message}
                self._send(response.code, json.dumps(content), response.media_type or "application/json")

        return Handler

    def place(self, item: dict) -> Link:
        """A content item from a deep-linking response becomes a link in the course (with its line item)."""
        lineitem = item.get("lineItem")
        return self.add_link(
            item.get("title", ""), item.get("custom"), lineitem["scoreMaximum"] if lineitem else None
        )


class _Grades(AssignmentsGradesService):
    def __init__(self, *args: t.Any, lms: Lms, **kwargs: t.Any) -> None:
        super().__init__(*args, **kwargs)
        self.lms = lms

    def find_lineitems(self, page: int = 1, limit: int | None = None) -> t.Any:
        return {"content": list(self.lms.lineitems.values()), "has_next": False, "next": None}

    def find_lineitem(self, line_item_id: str) -> t.Any:
        if line_item_id not in self.lms.lineitems:
            raise LineItemNotFoundException
        return self.lms.lineitems[line_item_id]

    def create_lineitem(self, lineitem: t.Any) -> t.Any:
        raise NotImplementedError("the tests' LMS makes line items from deep-linking responses only")

    update_lineitem = delete_lineitem = create_lineitem

    def update_score(self, line_item_id: str, score: t.Any) -> UpdateScoreStatus:
        if line_item_id not in self.lms.lineitems:
            raise LineItemNotFoundException
        self.lms.scores.append({"lineitem": line_item_id, **score})
        return UpdateScoreStatus.SUCCESS

    def get_results(self, line_item_id: str, page: int = 1, limit: int | None = None,
                    user_id: str | None = None) -> t.Any:
        return {"content": [], "has_next": False, "next": None}


class _Roster(NamesRoleProvisioningService):
    def __init__(self, *args: t.Any, lms: Lms, **kwargs: t.Any) -> None:
        super().__init__(*args, **kwargs)
        self.lms = lms

    def get_member_data_page(self, page: int = 1, limit: int | None = None, role: str | None = None,
                             since: str | None = None, **_: t.Any) -> t.Any:
        members = [
            {"user_id": p.sub, "roles": p.roles, "name": p.name, "email": p.email, "status": "Active"}
            for p in self.lms.people.values()
        ]
        return {"content": members, "has_next": False, "next": None}

    def get_context_by_id(self) -> Context:
        return Context(id=self.lms.context_id, label="GRAPHS-1", title=self.lms.context_title)


def tampered(id_token: str, **claims: t.Any) -> str:
    """The same token with claims changed and the platform's signature kept: a forgery."""
    header, body, signature = id_token.split(".")
    padded = body + "=" * (-len(body) % 4)
    payload = json.loads(base64.urlsafe_b64decode(padded))
    payload.update(claims)
    forged = base64.urlsafe_b64encode(json.dumps(payload).encode()).rstrip(b"=").decode()
    return f"{header}.{forged}.{signature}"
