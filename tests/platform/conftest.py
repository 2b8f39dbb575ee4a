"""Factories for platform tests: real exercises loaded into the catalog, users by role."""
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
THIN_PATH_EXERCISE = "static-graph-executor"


@pytest.fixture(autouse=True)
def _on_postgres_in_ci(request, settings, requires):
    """The tests that matter run on PostgreSQL; SQLite in CI would hide what production does."""
    if "django_db_setup" in request.fixturenames:
        engine = settings.DATABASES["default"]["ENGINE"]
        requires("PostgreSQL", engine.endswith("postgresql"), "set DATABASE_URL to a postgres:// URL")


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


@pytest.fixture
def exercise(db, content_dir, settings, tmp_path):
    """The thin-path exercise, synced into the catalog from the real content."""
    from catalog.models import Exercise
    from catalog.services import content_sync

    settings.EXERCISE_CACHE_DIR = tmp_path / "exercise-cache"
    report = content_sync(content_dir)
    assert not report.errors, report.errors
    return Exercise.objects.get(slug=THIN_PATH_EXERCISE)
