"""The login brake cannot be walked around (issue 24): a name spelled another way that Django
reads as the same account, many addresses against one account, one address against many
names, and the admin's own login form."""
from __future__ import annotations

import uuid

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def fresh_address() -> str:
    """Counts live in the shared cache (Redis) for LOGIN_THROTTLE_S: every test brakes its own address."""
    n = uuid.uuid4().int
    return f"10.{n % 250}.{(n >> 8) % 250}.{(n >> 16) % 250 + 1}"


def fail_logins(client, username: str, times: int, address: str) -> None:
    for _ in range(times):
        response = client.post(reverse("login"), {"username": username, "password": "wrong"}, REMOTE_ADDR=address)
        assert response.status_code == 200


def full_width(name: str) -> str:
    """ｓｔｕｄｅｎｔ: NFKC reads it as the plain name."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in name)


def test_a_full_width_spelling_of_a_braked_name_is_braked_too(client, make_user, settings):
    settings.LOGIN_FAILURES_ALLOWED = 3
    user = make_user(f"target{uuid.uuid4().hex[:8]}")
    address = fresh_address()
    fail_logins(client, user.username, 3, address)
    variant = full_width(user.username)
    assert variant != user.username
    refused = client.post(reverse("login"), {"username": variant, "password": user.raw_password},
                          REMOTE_ADDR=address)
    assert refused.status_code == 429
    assert "_auth_user_id" not in client.session


def test_one_account_is_braked_whatever_the_address(client, make_user, settings):
    settings.LOGIN_FAILURES_ALLOWED = 100
    settings.LOGIN_ACCOUNT_FAILURES_ALLOWED = 4
    user = make_user(f"target{uuid.uuid4().hex[:8]}")
    for _ in range(4):
        fail_logins(client, user.username, 1, address=fresh_address())
    refused = client.post(reverse("login"), {"username": user.username, "password": user.raw_password},
                          REMOTE_ADDR=fresh_address())
    assert refused.status_code == 429 and "_auth_user_id" not in client.session


def test_one_address_is_braked_whatever_the_name(client, make_user, settings):
    settings.LOGIN_FAILURES_ALLOWED = 100
    settings.LOGIN_ADDRESS_FAILURES_ALLOWED = 4
    address = fresh_address()
    for n in range(4):
        fail_logins(client, f"spray{n}{uuid.uuid4().hex[:6]}", 1, address=address)
    user = make_user(f"bystander{uuid.uuid4().hex[:8]}")
    refused = client.post(reverse("login"), {"username": user.username, "password": user.raw_password},
                          REMOTE_ADDR=address)
    assert refused.status_code == 429
    welcome = client.post(reverse("login"), {"username": user.username, "password": user.raw_password},
                          REMOTE_ADDR=fresh_address())
    assert welcome.status_code == 302


def test_the_admin_login_cannot_sidestep_the_brake(client, make_user, settings):
    settings.LOGIN_FAILURES_ALLOWED = 3
    staff = make_user(f"staff{uuid.uuid4().hex[:8]}", role="instructor")
    staff.is_staff = True
    staff.save()
    address = fresh_address()
    fail_logins(client, staff.username, 3, address)
    client.post("/admin/login/", {"username": staff.username, "password": staff.raw_password,
                                  "next": "/admin/"}, REMOTE_ADDR=address)
    assert "_auth_user_id" not in client.session
    sent_on = client.get("/admin/login/?next=/admin/")
    assert sent_on.status_code == 302 and sent_on.url.startswith(reverse("login"))


def test_behind_the_proxy_each_client_has_its_own_address_count(client, make_user, settings):
    """Every connection comes from the proxy: the address count follows the client the proxy
    appended to X-Forwarded-For, so one client's guesses do not lock everyone out, and a
    client's own X-Forwarded-For entry does not give it a new address."""
    settings.BEHIND_TLS_PROXY = True
    settings.LOGIN_FAILURES_ALLOWED = 100
    settings.LOGIN_ADDRESS_FAILURES_ALLOWED = 3
    guesser, bystander = fresh_address(), fresh_address()
    for n in range(3):
        forged = f"{fresh_address()}, {guesser}"  # what it wrote itself, then what the proxy saw
        response = client.post(reverse("login"), {"username": f"spray{n}{uuid.uuid4().hex[:6]}", "password": "x"},
                               REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR=forged)
        assert response.status_code == 200
    user = make_user(f"bystander{uuid.uuid4().hex[:8]}")
    form = {"username": user.username, "password": user.raw_password}
    refused = client.post(reverse("login"), form, REMOTE_ADDR="127.0.0.1",
                          HTTP_X_FORWARDED_FOR=f"{fresh_address()}, {guesser}")
    assert refused.status_code == 429
    welcome = client.post(reverse("login"), form, REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR=bystander)
    assert welcome.status_code == 302
