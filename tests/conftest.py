"""Fixtures shared by the whole suite."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

IN_CI = os.environ.get("CI") == "true"

# The ``sandbox`` fixture (every backend in turn), for any test that names it.
pytest_plugins = ["tests.sandbox.backends"]


def require(component: str, available: bool, how: str = "") -> None:
    """Skip a test whose component is missing, except in CI, where that is a failure.

    A docker, browser or PostgreSQL test that skips in CI counts as missing, so CI fails
    loudly instead.
    """
    if available:
        return
    message = f"{component} is not available" + (f": {how}" if how else "")
    if IN_CI:
        pytest.fail(message + " (CI must provide it)", pytrace=False)
    pytest.skip(message)


@pytest.fixture
def requires():
    """``requires("Docker engine", docker_is_up(), "start dockerd")`` inside a test."""
    return require


CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="session")
def chromium():
    """A real headless Chromium driven by Playwright (Debian's build; Playwright downloads none)."""
    available = os.path.exists(CHROMIUM)
    require("Chromium", available, "apt-get install chromium")
    # Playwright's sync API keeps an event loop running in this thread; Django refuses ORM
    # calls next to a running loop unless told the caller is really synchronous.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
                  "--no-first-run", "--disable-component-update", "--disable-sync"],
        )
        yield browser
        browser.close()


@pytest.fixture
def page(chromium):
    context = chromium.new_context(locale="en-US")
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


@pytest.fixture
def content_dir(tmp_path) -> Path:
    """A private copy of exercises/ that a test may change."""
    target = tmp_path / "exercises"
    shutil.copytree(ROOT / "exercises", target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


@pytest.fixture
def make_user(django_user_model):
    def make(username: str = "ada", role: str = "student", password: str = "a-long-password-1"):
        user = django_user_model.objects.create_user(username=username, password=password, role=role)
        user.raw_password = password
        return user

    return make


DB_FIXTURES = {"db", "transactional_db", "django_db_setup", "live_server"}


@pytest.fixture(autouse=True)
def _database_tests_run_on_postgres(request):
    """The tests that matter run on PostgreSQL; SQLite in CI would hide what production does."""
    if request.node.get_closest_marker("django_db") or DB_FIXTURES.intersection(request.fixturenames):
        from django.conf import settings

        engine = settings.DATABASES["default"]["ENGINE"]
        require("PostgreSQL", engine.endswith("postgresql"), "set DATABASE_URL to a postgres:// URL")
