"""Launches from an LMS (lti1p3platform's platform): people land in the right course with the
right role, accounts are linked by (issuer, subject) alone, and every bad launch gets a clear page
in both languages and changes nothing in the database."""

import re

import pytest
from django.test import Client
from lti_tool.models import LtiDeployment

from accounts.models import User
from courses.models import Course, Membership
from lti.models import LinkedAccount, LinkedItem
from tests.platform import classroom as make
from tests.platform.lti.conftest import database_snapshot, launch, preflight
from tests.platform.lti.lms import DEEP_LINK, tampered

pytestmark = pytest.mark.django_db


def test_an_instructors_first_launch_creates_the_course_and_lands_in_its_picker(lms):
    client = Client()
    response = launch(client, lms, "teacher", DEEP_LINK)

    course = Course.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/lti/courses/{course.pk}/pick/"
    assert course.title_en == lms.context_title
    account = LinkedAccount.objects.get(issuer=lms.issuer, sub="sub-teacher")
    assert account.user.is_instructor
    assert Membership.objects.get(course=course, user=account.user).role == Membership.Role.INSTRUCTOR
    # Logged in: the picker opens, and the course's pages lead to its LMS page.
    assert client.get(response["Location"]).status_code == 200
    assert f'href="/lti/courses/{course.pk}/"' in client.get(f"/courses/{course.pk}/gradebook/").content.decode()


def test_a_student_before_the_course_exists_is_told_so(lms):
    response = launch(Client(), lms, "student", DEEP_LINK)
    assert response["Location"] == "/lti/not-ready/"
    assert not Course.objects.exists()


def test_a_student_lands_on_the_placed_item_as_a_student(lms):
    launch(Client(), lms, "teacher", DEEP_LINK)
    course = Course.objects.get()
    _assignment, item = make.assignment(course, make.exercise("graph-ex"))
    link = lms.add_link("Graph exercise", {"graphdojo_item": str(item.pk)}, score_maximum=10)

    response = launch(Client(), lms, "student", link.id)

    assert response["Location"] == f"/courses/{course.pk}/items/{item.pk}/"
    student = LinkedAccount.objects.get(issuer=lms.issuer, sub="sub-student").user
    assert Membership.objects.get(course=course, user=student).role == Membership.Role.STUDENT
    assert not student.is_instructor
    placed = LinkedItem.objects.get()
    assert placed.item == item
    assert placed.lineitem_url == f"{lms.url}/lineitems/{link.lineitem}"


def test_an_item_of_another_course_is_not_opened_by_a_forged_custom_parameter(lms):
    launch(Client(), lms, "teacher", DEEP_LINK)
    other_course = make.course()
    _assignment, foreign = make.assignment(other_course, make.exercise("other-ex"))
    link = lms.add_link("Not ours", {"graphdojo_item": str(foreign.pk)}, score_maximum=10)

    response = launch(Client(), lms, "student", link.id)

    assert response["Location"] == f"/courses/{Course.objects.exclude(pk=other_course.pk).get().pk}/"
    assert not LinkedItem.objects.exists()


def test_accounts_are_linked_by_issuer_and_subject_never_by_email(lms):
    # Someone here already uses the address the LMS gives its student.
    squatter = make.user("squatter", email="sam@lms.example")
    launch(Client(), lms, "teacher", DEEP_LINK)

    launch(Client(), lms, "student", DEEP_LINK)
    launch(Client(), lms, "student", DEEP_LINK)

    student = LinkedAccount.objects.get(issuer=lms.issuer, sub="sub-student").user
    assert student != squatter
    assert LinkedAccount.objects.filter(user=squatter).count() == 0
    assert User.objects.filter(email="sam@lms.example").count() == 2
    assert LinkedAccount.objects.filter(sub="sub-student").count() == 1  # the second launch found the first


# -- bad launches -----------------------------------------------------------------------------------

REFUSED = {"en": "This launch from your LMS was refused", "zh-hans": "来自 LMS 的这次启动被拒绝了"}
REASONS = {
    "wrong issuer": {"en": "unknown issuer", "zh-hans": "未知的签发方"},
    "wrong audience": {"en": "its audience is not a client id registered here", "zh-hans": "受众"},
    "expired": {"en": "This launch has expired", "zh-hans": "这次启动已过期"},
    "bad signature": {"en": "signature does not verify", "zh-hans": "签名"},
    "replayed nonce": {"en": "This launch was already used once", "zh-hans": "这次启动已经用过一次"},
}


def _bad_launch(client: Client, lms, case: str):
    """Post one bad launch; returns (response, snapshot of the database just before the post)."""
    if case == "replayed nonce":
        first = lms.launch(preflight(client, lms, "teacher", DEEP_LINK))
        accepted = client.post("/lti/launch/", {"id_token": first["id_token"], "state": first["state"]})
        assert accepted.status_code == 302
        before = database_snapshot()
        again = client.post("/lti/launch/", {"id_token": first["id_token"], "state": first["state"]})
        return again, before
    asked = preflight(client, lms, "teacher", DEEP_LINK)
    if case == "wrong issuer":
        signed = lms.launch(asked, issuer="https://evil.example")
    elif case == "wrong audience":
        signed = lms.launch({**asked, "client_id": "another-tool"}, client_id="another-tool")
    elif case == "expired":
        signed = lms.launch(asked, expires_in=-120)
    else:  # bad signature: the platform's token with its subject changed, its signature kept
        signed = lms.launch(asked)
        signed["id_token"] = tampered(signed["id_token"], sub="sub-student")
    before = database_snapshot()
    return client.post("/lti/launch/", {"id_token": signed["id_token"], "state": signed["state"]}), before


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize("case", list(REASONS))
def test_a_bad_launch_gets_a_clear_page_and_changes_nothing(lms, case, language):
    client = Client(HTTP_ACCEPT_LANGUAGE=language)

    response, before = _bad_launch(client, lms, case)

    assert response.status_code == 400
    page = response.content.decode()
    assert REFUSED[language] in page
    assert REASONS[case][language] in page
    assert database_snapshot() == before
    if case != "replayed nonce":  # the first, good launch of that case logged its user in
        assert "_auth_user_id" not in client.session


def test_a_launch_with_the_state_of_another_browser_is_refused(lms):
    signed = lms.launch(preflight(Client(), lms, "teacher", DEEP_LINK))
    before = database_snapshot()
    response = Client().post("/lti/launch/", {"id_token": signed["id_token"], "state": signed["state"]})
    assert response.status_code == 400
    assert "state cookie" in response.content.decode()
    assert database_snapshot() == before


def test_a_login_from_an_unknown_platform_is_refused(lms):
    response = Client().get(
        "/lti/login/",
        {"iss": "https://evil.example", "login_hint": "x", "target_link_uri": "http://testserver/lti/launch/",
         "client_id": lms.client_id},
    )
    assert response.status_code == 400
    assert re.search("unknown issuer", response.content.decode())


def test_a_deployment_the_administrator_has_not_activated_is_refused_and_not_stored(lms):
    LtiDeployment.objects.update(is_active=False)
    client = Client()
    signed = lms.launch(preflight(client, lms, "teacher", DEEP_LINK))
    before = database_snapshot()

    response = client.post("/lti/launch/", {"id_token": signed["id_token"], "state": signed["state"]})

    assert response.status_code == 400
    assert "waits for a site administrator to activate its deployment" in response.content.decode()
    assert database_snapshot() == before
