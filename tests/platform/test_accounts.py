import pytest
from django.urls import reverse

from accounts.services import demo_accounts_ensure

pytestmark = pytest.mark.django_db


def test_demo_accounts_can_log_in_and_only_the_instructor_reaches_the_catalog_admin(client):
    accounts = {role: (username, password) for username, password, role in demo_accounts_ensure()}
    demo_accounts_ensure()  # idempotent: a second `make run` resets, never duplicates
    assert client.login(username=accounts["instructor"][0], password=accounts["instructor"][1])
    assert client.get(reverse("admin:catalog_exercise_changelist")).status_code == 200
    assert client.get(reverse("admin:accounts_user_changelist")).status_code == 403
    client.logout()
    assert client.login(username=accounts["student"][0], password=accounts["student"][1])
    assert client.get(reverse("admin:catalog_exercise_changelist")).status_code == 302  # to the admin login
