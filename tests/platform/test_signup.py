"""Accounts a student makes alone: sign up, reset a forgotten password by email, choose the
name boards show."""

import re

import pytest
from django.core import mail
from django.urls import reverse

from accounts.models import User
from tests.platform import classroom as make

pytestmark = pytest.mark.django_db


def test_a_student_signs_up_gets_a_pseudonym_and_lands_where_they_were_going(client):
    response = client.post(
        reverse("accounts:signup"),
        {
            "username": "ada",
            "email": "Ada@Example.org",
            "password1": "a-long-password-1",
            "password2": "a-long-password-1",
            "next": "/courses/join/ABCD2345/",
        },
    )
    assert response.status_code == 302 and response.url == "/courses/join/ABCD2345/"
    ada = User.objects.get(username="ada")
    assert (ada.role, ada.email, ada.is_staff) == ("student", "ada@example.org", False)
    assert re.fullmatch(r"[a-z]+-[a-z]+-\d{4}", ada.pseudonym)
    again = client.post(
        reverse("accounts:signup"),
        {
            "username": "ada2",
            "email": "ada@example.org",
            "password1": "a-long-password-1",
            "password2": "a-long-password-1",
        },
    )
    assert again.status_code == 200 and "exists already" in again.content.decode()
    offsite = client.post(
        reverse("accounts:signup"),
        {
            "username": "bob",
            "email": "bob@example.org",
            "password1": "a-long-password-1",
            "password2": "a-long-password-1",
            "next": "https://evil.example/",
        },
    )
    assert offsite.url == reverse("submissions:exercise_list")


def test_a_forgotten_password_is_reset_through_the_emailed_link(client):
    make.user("grace", email="grace@example.org")
    client.post(reverse("accounts:password_reset"), {"email": "grace@example.org"})
    assert len(mail.outbox) == 1
    link = re.search(r"https?://[^/]+(/accounts/password-reset/\S+/)", mail.outbox[0].body).group(1)
    form = client.get(link, follow=True)
    assert "Choose a new password" in form.content.decode()
    done = client.post(
        form.redirect_chain[-1][0], {"new_password1": "another-long-pass-2", "new_password2": "another-long-pass-2"}
    )
    assert done.status_code == 302
    assert client.login(username="grace", password="another-long-pass-2")
    assert "used already or has expired" in client.get(link, follow=True).content.decode()


def test_a_pseudonym_is_chosen_unique_and_boards_can_be_left(client):
    make.user("taken", pseudonym="graph-wizard")
    me = make.user("me")
    client.force_login(me)
    clash = client.post(reverse("accounts:profile"), {"pseudonym": "Graph-Wizard"})
    assert clash.status_code == 400 and "goes by this name" in clash.content.decode()
    client.post(reverse("accounts:profile"), {"pseudonym": "tape-rider", "hide_from_public_boards": "on"})
    me.refresh_from_db()
    assert (me.pseudonym, me.hide_from_public_boards) == ("tape-rider", True)


def test_pages_come_in_chinese(client):
    client.cookies["django_language"] = "zh-hans"
    page = client.get(reverse("accounts:signup"), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "注册" in page


def test_a_password_must_have_twelve_characters(client):
    """OWASP ASVS 2.1.1 (level 1): at least 12 characters, no other composition rule."""
    short = client.post(
        reverse("accounts:signup"),
        {"username": "kim", "email": "kim@example.org", "password1": "graphs-2027", "password2": "graphs-2027"},
    )
    assert short.status_code == 200 and not User.objects.filter(username="kim").exists()
    assert "at least 12 characters" in short.content.decode()


def test_changing_a_password_asks_for_the_current_one_and_tells_the_owner(client):
    """ASVS 2.1.5/2.1.6: a user changes their password with the current one; 2.2.3/2.5.5: the
    account's address is told, with the way back if it was not them."""
    user = make.user("lin", email="lin@example.org")
    client.force_login(user)
    url = reverse("accounts:password_change")
    assert url in client.get(reverse("accounts:profile")).content.decode()
    wrong = client.post(url, {"old_password": "not-it-at-all", "new_password1": "a-new-password-77",
                              "new_password2": "a-new-password-77"})
    assert wrong.status_code == 200 and not mail.outbox
    right = client.post(url, {"old_password": "a-long-password-1", "new_password1": "a-new-password-77",
                              "new_password2": "a-new-password-77"})
    assert right.status_code == 302
    user.refresh_from_db()
    assert user.check_password("a-new-password-77")
    assert [m.to for m in mail.outbox] == [["lin@example.org"]]
    assert "/accounts/password-reset/" in mail.outbox[0].body and "密码" in mail.outbox[0].body
