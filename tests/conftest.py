"""Fixtures shared by the whole suite."""
from __future__ import annotations

import os

import pytest

IN_CI = os.environ.get("CI") == "true"


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
