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
