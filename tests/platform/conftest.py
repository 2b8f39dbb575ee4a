"""Factories for platform tests: real exercises loaded into the catalog, users by role."""
import pytest

THIN_PATH_EXERCISE = "static-graph-executor"


@pytest.fixture
def exercise(db, content_dir, settings, tmp_path):
    """The thin-path exercise, synced into the catalog from the real content."""
    from catalog.models import Exercise
    from catalog.services import content_sync

    settings.EXERCISE_CACHE_DIR = tmp_path / "exercise-cache"
    report = content_sync(content_dir)
    assert not report.errors, report.errors
    return Exercise.objects.get(slug=THIN_PATH_EXERCISE)
