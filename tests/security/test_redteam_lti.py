"""An independent red team's attacks on the LTI 1.3 tool, aimed at one thing: entering a course
that is not the attacker's (its people's accounts, its roster, its gradebook, its grades).

The attacker has an ordinary account here, a learner's seat in some LMS course, and an LMS of their
own (a platform a site administrator registered, by hand or with a one-time link). The victim is
another LMS, registered by hand, whose instructor's first launch made a course here with a student in
it. Both LMSs are lti1p3platform's over HTTP (tests/platform/lti/lms.py). Every test asserts the safe
outcome; an attack that works is a strict xfail whose reason says how it works."""

from __future__ import annotations

import json
import secrets
import typing as t
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlparse

import pytest
from django.test import Client
from lti_tool.models import Key, LtiRegistration

from accounts.models import User
from courses.models import AssignmentItem, Course, Membership
from lti.models import GradeSync, LinkedAccount, LinkedCourse, LinkedItem, RegistrationLink
from lti.services import keys_rotate, roster_sync
from tests.platform import classroom as make
from tests.platform.lti.conftest import launch, registration_for
from tests.platform.lti.lms import DEEP_LINK, INSTRUCTOR, LEARNER, Lms

pytestmark = pytest.mark.django_db


class HostingLms(Lms):
    """An LMS that, like most, serves what its users upload from its own host (Moodle's
    pluginfile.php) and sends a browser on to an address it is given (a login's return address)."""

    def __init__(self, *args: t.Any, **kwargs: t.Any) -> None:
        self.uploads: dict[str, str] = {}  # name -> body, served as /pluginfile/<name>
        super().__init__(*args, **kwargs)

    def _handler(self) -> t.Any:
        base = super()._handler()
        lms = self

        class Handler(base):  # type: ignore[misc, valid-type]
            def do_GET(self) -> None:
                parsed = urlparse(self.path)
                if parsed.path.startswith("/pluginfile/"):
                    self._send(200, lms.uploads[parsed.path.removeprefix("/pluginfile/")], "application/json")
                elif parsed.path == "/redirect":
                    self._send(302, "", headers={"Location": dict(parse_qsl(parsed.query))["to"]})
                else:
                    super().do_GET()

        return Handler


@dataclass
class Victim:
    lms: HostingLms
    course: Course
    teacher: User
    student: User


@pytest.fixture
def victim(db):
    """The victim LMS (its issuer is its URL, as an LMS that registers tools by URL has), registered
    by hand; its instructor's launch made the course here, its student launched into it."""
    keys_rotate()
    platform = HostingLms("http://testserver", tool_keyset=Key.objects.as_jwks(), issuer_is_url=True).start()
    platform.add_person("teacher", "Pat Teacher", INSTRUCTOR, email="pat@victim.example")
    platform.add_person("student", "Sam Student", LEARNER, email="sam@victim.example")
    registration_for(platform)
    launch(Client(), platform, "teacher", DEEP_LINK)
    launch(Client(), platform, "student", DEEP_LINK)
    course = Course.objects.get()
    teacher = LinkedAccount.objects.get(issuer=platform.issuer, sub="sub-teacher").user
    student = LinkedAccount.objects.get(issuer=platform.issuer, sub="sub-student").user
    yield Victim(platform, course, teacher, student)
    platform.stop()


@pytest.fixture
def attacker_lms(victim):
    """The attacker's own LMS, not yet registered here: its people carry the victim's subjects
    (an LMS's subject is often its user's number), its course the victim's context id."""
    platform = Lms("http://testserver", tool_keyset=Key.objects.as_jwks()).start()
    platform.issuer = "https://evil.lms.example"
    platform.add_person("teacher", "Eve Teacher", INSTRUCTOR, email="pat@victim.example")
    platform.add_person("student", "Eve Student", LEARNER, email="sam@victim.example")
    yield platform
    platform.stop()


def _registration_link(name: str = "Attacker's LMS") -> str:
    """The path of a one-time registration link a site administrator made for the attacker's LMS."""
    admin = Client()
    admin.force_login(User.objects.create_superuser(f"root-{secrets.token_hex(3)}", password="a-long-password-1"))
    page = admin.post("/lti/registrations/", {"name": name}).content.decode()
    start = page.index("http://testserver/lti/register/")
    return page[start:page.index("/", start + len("http://testserver/lti/register/")) + 1].removeprefix(
        "http://testserver"
    )


def _register_dynamically(attacker: Lms, openid_configuration: str) -> int:
    """Open the attacker's link as its LMS would, with an openid_configuration of the attacker's choosing."""
    token = secrets.token_urlsafe(16)
    attacker.registration_tokens.add(token)
    query = urlencode({"openid_configuration": openid_configuration, "registration_token": token})
    return Client().get(f"{_registration_link()}?{query}").status_code


def _launch_if_let_in(browser: Client, lms: Lms, person: str, link: str = DEEP_LINK) -> None:
    """Launch as the LMS's person when the tool starts the login at all (it may refuse the platform)."""
    started = browser.get(lms.login_url(person, link))
    if started.status_code != 302 or urlparse(started["Location"]).path != "/authorize":
        return
    signed = lms.launch(dict(parse_qsl(urlparse(started["Location"]).query)))
    browser.post("/lti/launch/", {"id_token": signed["id_token"], "state": signed["state"]})


def _gradebook(browser: Client, course: Course) -> int:
    return browser.get(f"/courses/{course.pk}/gradebook/").status_code


# -- a second registration that claims the victim LMS's issuer ------------------------------------

# Dynamic registration checks only that the OpenID configuration's issuer is on the host it was read
# from; the jwks_uri, authorization and registration endpoints may be anywhere, and accounts are
# linked by (issuer, sub) across registrations. A configuration the attacker can place on the victim
# LMS's host (an upload its users may make, or a redirect) names the victim's issuer with the
# attacker's keys: a second registration of that issuer, whose launches sign any sub. The attacker's
# launch with the victim instructor's sub logs in as that instructor and opens their course's
# gradebook. Class: identity keyed by issuer while trust (keys) is per registration; a platform's
# word vouched for by a host it does not own. Closed: accounts are linked by (registration, sub),
# and the configuration is read without following redirects.


def _spoofed_configuration(victim: Victim, attacker: Lms) -> str:
    attacker.issuer = victim.lms.issuer  # the attacker's LMS speaks as the victim's, with its own keys
    attacker.client_id = "evil-client"
    return json.dumps(attacker.openid_configuration())


def test_a_configuration_uploaded_to_the_victim_lms_does_not_reach_the_victim_s_people(victim, attacker_lms):
    # The registration may stand (several LMSs share an issuer, as Canvas cloud's schools do);
    # what must not is an account of the victim's LMS reached through it: accounts are linked
    # by (registration, sub), never by issuer.
    victim.lms.uploads["lti.json"] = _spoofed_configuration(victim, attacker_lms)
    _register_dynamically(attacker_lms, f"{victim.lms.url}/pluginfile/lti.json")
    browser = Client()

    _launch_if_let_in(browser, attacker_lms, "teacher")

    assert _gradebook(browser, victim.course) in (302, 404)
    assert browser.session.get("_auth_user_id") != str(victim.teacher.pk)


def test_a_redirect_on_the_victim_lms_does_not_register_its_issuer_for_the_attacker(victim, attacker_lms):
    configuration = _spoofed_configuration(victim, attacker_lms)
    assert json.loads(configuration)["issuer"] == victim.lms.issuer
    hop = urlencode({"to": f"{attacker_lms.url}/.well-known/openid-configuration"})
    _register_dynamically(attacker_lms, f"{victim.lms.url}/redirect?{hop}")
    browser = Client()

    _launch_if_let_in(browser, attacker_lms, "teacher")

    assert _gradebook(browser, victim.course) in (302, 404)
    assert LtiRegistration.objects.filter(issuer=victim.lms.issuer).count() == 1


def test_a_configuration_on_the_attacker_s_host_naming_the_victim_s_issuer_is_refused(victim, attacker_lms):
    configuration = _spoofed_configuration(victim, attacker_lms)
    assert json.loads(configuration)["issuer"] == victim.lms.issuer

    status = _register_dynamically(attacker_lms, f"{attacker_lms.url}/.well-known/openid-configuration")

    assert status == 400
    assert LtiRegistration.objects.filter(issuer=victim.lms.issuer).count() == 1


# -- the attacker's own registration reusing the victim's ids ------------------------------------


@pytest.fixture
def attacker(victim, attacker_lms):
    """The attacker's LMS registered by hand under its own issuer, with the victim's client id,
    deployment id and context id; its instructor launched once (a course of its own here)."""
    registration_for(attacker_lms)
    browser = Client()
    launch(browser, attacker_lms, "teacher", DEEP_LINK)
    return attacker_lms, browser


def test_the_victim_s_subject_deployment_and_context_from_another_issuer_land_in_a_course_of_their_own(
    victim, attacker
):
    attacker_lms, browser = attacker
    assert (attacker_lms.deployment_id, attacker_lms.context_id) == (victim.lms.deployment_id, victim.lms.context_id)

    launch(Client(), attacker_lms, "student", DEEP_LINK)

    assert _gradebook(browser, victim.course) == 404
    own = Course.objects.exclude(pk=victim.course.pk).get()
    assert LinkedCourse.objects.filter(course=victim.course).count() == 1
    people = set(Membership.objects.filter(course=own).values_list("user_id", flat=True))
    assert not people & {victim.teacher.pk, victim.student.pk}
    assert set(Membership.objects.filter(course=victim.course).values_list("user_id", "role")) == {
        (victim.teacher.pk, Membership.Role.INSTRUCTOR), (victim.student.pk, Membership.Role.STUDENT)
    }


def test_a_placed_link_naming_the_victim_s_item_does_not_open_it_nor_take_its_grades(victim, attacker):
    attacker_lms, _browser = attacker
    _assignment, item = make.assignment(victim.course, make.exercise("victim-ex"), points=10)
    link = attacker_lms.add_link("Their exercise", {"graphdojo_item": str(item.pk)}, score_maximum=10)
    student = Client()

    response = launch(student, attacker_lms, "student", link.id)

    assert response["Location"] != f"/courses/{victim.course.pk}/items/{item.pk}/"
    assert student.get(f"/courses/{victim.course.pk}/items/{item.pk}/").status_code == 404
    assert not LinkedItem.objects.filter(item=item).exists()


def test_the_attacker_s_roster_naming_the_victim_s_subjects_as_instructors_changes_nobody_there(
    victim, attacker
):
    attacker_lms, _browser = attacker
    attacker_lms.people["student"].roles = INSTRUCTOR  # the victim's student's sub, as an instructor
    own = LinkedCourse.objects.exclude(course=victim.course).get()

    synced = roster_sync(own.pk)

    assert synced.roster_error == "" and synced.roster_members == 2
    victim.student.refresh_from_db()
    assert not victim.student.is_instructor
    assert not Membership.objects.filter(course=own.course, user__in=[victim.teacher, victim.student]).exists()
    assert Membership.objects.get(course=victim.course, user=victim.student).role == Membership.Role.STUDENT


def test_the_attacker_s_deep_linking_launch_places_nothing_in_the_victim_s_course(victim, attacker):
    _attacker_lms, browser = attacker
    make.exercise("graph-ex")

    picked = browser.post(f"/lti/courses/{victim.course.pk}/pick/", {"choice": ["exercise:graph-ex"]})

    assert picked.status_code == 404
    assert not AssignmentItem.objects.filter(assignment__course=victim.course).exists()
    assert browser.get(f"/lti/courses/{victim.course.pk}/").status_code == 404
    assert browser.post(f"/lti/courses/{victim.course.pk}/roster/").status_code == 404


def test_a_site_student_opens_none_of_the_victim_s_lms_pages(victim):
    stranger = Client()
    stranger.force_login(make.user("stranger"))
    course = victim.course

    assert stranger.get(f"/lti/courses/{course.pk}/").status_code == 404
    assert stranger.get(f"/lti/courses/{course.pk}/pick/").status_code == 404
    assert stranger.post(f"/lti/courses/{course.pk}/roster/").status_code == 404
    assert _gradebook(stranger, course) == 404
    # The victim's own student is no staff of it either.
    student = Client()
    student.force_login(victim.student)
    assert student.get(f"/lti/courses/{course.pk}/").status_code == 404
    assert _gradebook(student, course) == 404


def test_a_victim_student_who_joins_the_attacker_s_course_sends_it_no_grades(victim, attacker):
    attacker_lms, _browser = attacker
    own = Course.objects.exclude(pk=victim.course.pk).get()
    exercise = make.exercise("shared-ex")
    _assignment, item = make.assignment(own, exercise, points=10)
    link = attacker_lms.add_link("Shared exercise", {"graphdojo_item": str(item.pk)}, score_maximum=10)
    launch(Client(), attacker_lms, "student", link.id)  # the link's line item is known here now
    # The victim's student follows the join link the attacker handed out (a seat, nothing more).
    joined = Client()
    joined.force_login(victim.student)
    assert joined.post(f"/courses/join/{own.join_code}/", {"code": own.join_code}).status_code == 302

    make.graded(victim.student, exercise, score=1.0)

    assert not GradeSync.objects.filter(user=victim.student).exists()
    assert attacker_lms.scores == []


# A site administrator registers by hand a second LMS that shares the victim's issuer with keys of
# its own (self-hosted Canvas keeps https://canvas.instructure.com, the issuer of every Canvas in
# the cloud, unless its operator changes it); PyLTI1p3 checks each launch against its own
# registration's keys, but lti.services.account_link finds the account by (issuer, sub) alone, so
# that LMS's launch with the victim instructor's sub logs in as them and opens their gradebook.
# Class: identity keyed by issuer while trust (keys) is per registration. Closed: accounts are
# linked by (registration, sub).


def test_a_second_lms_registered_by_hand_under_the_victim_s_issuer_does_not_log_in_as_its_people(
    victim, attacker_lms
):
    attacker_lms.issuer, attacker_lms.client_id = victim.lms.issuer, "self-hosted-client"
    registration_for(attacker_lms)  # its own client id, its own keys (keyset_url), the same issuer
    browser = Client()

    _launch_if_let_in(browser, attacker_lms, "teacher")

    assert _gradebook(browser, victim.course) in (302, 404)


UNBOUND_NONCE_OVER_HTTP = (
    "Over plain HTTP PyLTI1p3's cache storage keeps nonces without the browser's lti1p3-session-id "
    "(CacheDataStorage.get_session_cookie_name answers None unless request.is_secure()), and nothing binds "
    "a nonce to the state it was issued with: an id_token signed for the victim (intercepted before their "
    "browser posts it) is accepted from the attacker's browser with the attacker's own state cookie, "
    "and logs it in as the victim. Over HTTPS the nonce is bound to the browser (the test beside this). "
    "Class: a bearer launch token not bound to the browser that asked for it (HTTP deployments only)."
)


def _intercepted_launch(victim: Victim, *, secure: bool) -> tuple[Client, Client, dict, str]:
    """The victim's browser starts a launch; the attacker's starts one of its own (a state cookie of
    its own); the LMS signs the victim's, which the attacker intercepts before it is posted."""
    attacker_browser, victim_browser = Client(), Client()
    mine = attacker_browser.get(victim.lms.login_url("student"), secure=secure)["Location"]
    theirs = victim_browser.get(victim.lms.login_url("teacher"), secure=secure)["Location"]
    signed_for_victim = victim.lms.launch(dict(parse_qsl(urlparse(theirs).query)))
    return attacker_browser, victim_browser, signed_for_victim, dict(parse_qsl(urlparse(mine).query))["state"]


@pytest.mark.xfail(strict=True, reason=UNBOUND_NONCE_OVER_HTTP)
def test_over_http_the_victim_s_signed_launch_posted_from_the_attacker_s_browser_is_refused(victim):
    attacker_browser, _victim_browser, signed, own_state = _intercepted_launch(victim, secure=False)

    attacker_browser.post("/lti/launch/", {"id_token": signed["id_token"], "state": own_state})

    assert _gradebook(attacker_browser, victim.course) in (302, 404)


def test_over_https_the_victim_s_signed_launch_posted_from_the_attacker_s_browser_is_refused(victim):
    attacker_browser, victim_browser, signed, own_state = _intercepted_launch(victim, secure=True)

    response = attacker_browser.post(
        "/lti/launch/", {"id_token": signed["id_token"], "state": own_state}, secure=True
    )

    assert response.status_code == 400
    assert _gradebook(attacker_browser, victim.course) in (302, 404)
    # The victim's own post still lands: the attempt spent nothing of theirs.
    accepted = victim_browser.post(
        "/lti/launch/", {"id_token": signed["id_token"], "state": signed["state"]}, secure=True
    )
    assert accepted.status_code == 302


# -- a learner's seat in the victim's LMS course ---------------------------------------------------

INSTITUTION = "http://purl.imsglobal.org/vocab/lis/v2/institution/person#"
SYSTEM = "http://purl.imsglobal.org/vocab/lis/v2/system/person#"


def test_a_learner_who_teaches_elsewhere_in_the_institution_stays_a_student_of_this_course(victim):
    # Canvas and Moodle add institution and system roles to a course launch: a graduate student who
    # teaches another course (or administers the site) is still a learner in this one.
    victim.lms.add_person("grad", "Gus Graduate", [
        *LEARNER, INSTITUTION + "Instructor", INSTITUTION + "Administrator", SYSTEM + "Administrator",
    ])
    browser = Client()

    launch(browser, victim.lms, "grad", DEEP_LINK)

    grad = LinkedAccount.objects.get(issuer=victim.lms.issuer, sub="sub-grad").user
    assert Membership.objects.get(course=victim.course, user=grad).role == Membership.Role.STUDENT
    assert not grad.is_instructor
    assert _gradebook(browser, victim.course) == 404
    assert browser.get(f"/lti/courses/{victim.course.pk}/").status_code == 404


def test_the_tool_s_jwks_holds_public_keys_only(victim):
    keys_rotate()  # a current and a previous key

    keys = Client().get("/lti/jwks/").json()["keys"]

    assert len(keys) == 2
    assert all(set(key) & {"d", "p", "q", "dp", "dq", "qi"} == set() for key in keys)


def test_the_lti_staff_pages_refuse_a_cross_site_post(victim):
    # A page elsewhere makes the instructor's (or the site administrator's) browser post: the picker
    # would place items, the roster button sync, the registrations page mint a registration link.
    make.exercise("graph-ex")
    instructor = Client(enforce_csrf_checks=True)
    instructor.force_login(victim.teacher)
    course = victim.course
    assert instructor.post(f"/lti/courses/{course.pk}/pick/", {"choice": ["exercise:graph-ex"]}).status_code == 403
    assert instructor.post(f"/lti/courses/{course.pk}/roster/").status_code == 403
    assert not AssignmentItem.objects.exists()
    assert LinkedCourse.objects.get(course=course).roster_requested_at is None
    administrator = Client(enforce_csrf_checks=True)
    administrator.force_login(User.objects.create_superuser("root", password="a-long-password-1"))
    assert administrator.post("/lti/registrations/", {"name": "Evil LMS"}).status_code == 403
    assert not RegistrationLink.objects.exists()
