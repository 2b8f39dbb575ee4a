"""Roster rows are invitations claimed through an emailed link (issue 24): whoever registered a
class's usernames first is never enrolled in the students' places, the invited address gets
the mail, and the instructor sees who has claimed."""

import io
import re

import pytest
from django.core import mail
from django.urls import reverse

from accounts.models import User
from courses.models import Invitation, Membership
from courses.services import invitation_claim
from tests.platform import classroom as make

pytestmark = pytest.mark.django_db
ROSTER = b"username,email,name\ns1001,ada@uni.example,Ada Lovelace\ns1002,alan@uni.example,Alan Turing\n"


def roster_file(data: bytes = ROSTER) -> io.BytesIO:
    upload = io.BytesIO(data)
    upload.name = "roster.csv"
    return upload


def import_roster(client, course, data: bytes = ROSTER, capture=None):
    client.force_login(course.memberships.get(role="instructor").user)
    with capture(execute=True):  # invitations leave once the import commits
        return client.post(reverse("courses:roster", args=[course.pk]), {"roster": roster_file(data)}, follow=True)


def link_in(message) -> str:
    return re.search(r"https?://\S+/courses/invitations/\S+/", message.body).group(0).split("testserver", 1)[1]


def test_an_account_that_took_a_student_s_username_first_is_not_enrolled(
    client, django_capture_on_commit_callbacks
):
    squatter = make.user("s1001", email="squatter@evil.example")
    course = make.course()
    import_roster(client, course, capture=django_capture_on_commit_callbacks)
    assert not Membership.objects.filter(course=course, role="student").exists()
    assert sorted(m.to[0] for m in mail.outbox) == ["ada@uni.example", "alan@uni.example"]
    client.force_login(squatter)
    assert client.get(reverse("courses:detail", args=[course.pk])).status_code == 404
    # The real student follows the emailed link and makes an account of her own.
    client.logout()
    link = link_in(next(m for m in mail.outbox if m.to == ["ada@uni.example"]))
    page = client.get(link)
    assert page.status_code == 200 and "Graphs 101" in page.content.decode()
    taken = client.post(link, {"username": "s1001", "password1": "a-long-password-9", "password2": "a-long-password-9"})
    assert taken.status_code == 400 and not Membership.objects.filter(course=course, role="student").exists()
    client.post(link, {"username": "ada", "password1": "a-long-password-9", "password2": "a-long-password-9"})
    ada = User.objects.get(username="ada")
    assert (ada.email, ada.first_name, ada.last_name) == ("ada@uni.example", "Ada", "Lovelace")
    assert list(course.memberships.filter(role="student").values_list("user", flat=True)) == [ada.pk]
    assert not squatter.memberships.exists()
    assert Invitation.objects.get(email="ada@uni.example").claimed_by == ada


def test_an_existing_account_joins_only_by_claiming_while_logged_in(client, django_capture_on_commit_callbacks):
    alan = make.user("turing", email="alan@uni.example")
    course = make.course()
    import_roster(client, course, capture=django_capture_on_commit_callbacks)
    assert not alan.memberships.exists()  # the same email is not enough: the link is
    link = link_in(next(m for m in mail.outbox if m.to == ["alan@uni.example"]))
    client.logout()
    anonymous = client.get(link).content.decode()
    assert reverse("login") in anonymous  # an account has this address: log in to accept
    client.force_login(alan)
    assert client.post(link, {"accept": "1"}).status_code == 302
    assert alan.memberships.get().course == course
    client.force_login(make.user("latecomer"))
    used = client.post(link, {"accept": "1"})
    assert used.status_code == 400 and not User.objects.get(username="latecomer").memberships.exists()


def test_a_forged_or_altered_link_enrols_nobody(client, django_capture_on_commit_callbacks):
    course = make.course()
    import_roster(client, course, capture=django_capture_on_commit_callbacks)
    link = link_in(mail.outbox[0])
    other = Invitation.objects.exclude(email=mail.outbox[0].to[0]).get()
    intruder = make.user("intruder")
    client.force_login(intruder)
    token = link.rstrip("/").rsplit("/", 1)[1]
    for forged in (link[:-3] + "xx/", reverse("courses:invitation", args=[other.pk, token])):
        assert client.post(forged, {"accept": "1"}).status_code in (400, 404)
    assert not intruder.memberships.exists()


def test_the_roster_is_all_rows_or_none_and_shows_who_has_claimed(client, django_capture_on_commit_callbacks):
    course = make.course()
    bad = ROSTER + b"broken,not-an-email,X\n"
    response = import_roster(client, course, bad, capture=django_capture_on_commit_callbacks)
    assert "row 3: not-an-email is not an email address" in response.content.decode()
    assert not Invitation.objects.exists() and not mail.outbox
    import_roster(client, course, capture=django_capture_on_commit_callbacks)
    again = import_roster(client, course, capture=django_capture_on_commit_callbacks)  # nobody is mailed twice
    assert len(mail.outbox) == 2 and Invitation.objects.count() == 2
    assert "0 new invitations" in again.content.decode()
    ada = make.user("ada", email="ada@uni.example")
    invitation_claim(invitation=Invitation.objects.get(email="ada@uni.example"), user=ada)
    page = client.get(reverse("courses:roster", args=[course.pk]), headers={"accept-language": "en"})
    text = page.content.decode()
    assert "ada@uni.example" in text and "Claimed by ada" in text and "Waiting" in text
    client.cookies["django_language"] = "zh-hans"
    chinese = client.get(reverse("courses:roster", args=[course.pk])).content.decode()
    assert "已接受" in chinese and "等待接受" in chinese


def test_an_invitation_mail_speaks_both_languages(client, django_capture_on_commit_callbacks):
    course = make.course()
    import_roster(client, course, capture=django_capture_on_commit_callbacks)
    body = mail.outbox[0].body
    assert "Graphs 101" in body and "计算图入门" in body and "邀请" in body
