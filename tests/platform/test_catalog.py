"""sync_content mirrors exercises/ into the catalog without ever losing what was stored."""
import importlib

import pytest
from django.apps import apps
from django.core.management import call_command

from catalog.models import Exercise
from catalog.services import content_sync
from grading.exercises import exercise_version_folder, exercise_version_spec
from grading.models import Submission

pytestmark = pytest.mark.django_db
SLUG = "static-graph-executor"


def test_sync_is_idempotent(content_dir):
    first = content_sync(content_dir)
    assert SLUG in first.created and not first.errors
    second = content_sync(content_dir)
    assert SLUG in second.unchanged and not second.created and not second.updated
    assert Exercise.objects.get(slug=SLUG).versions.count() == 1


def test_a_changed_exercise_gets_a_new_version_and_old_submissions_keep_theirs(content_dir, make_user):
    content_sync(content_dir)
    exercise = Exercise.objects.get(slug=SLUG)
    old_version = exercise.current_version
    submission = Submission.objects.create(user=make_user(), exercise_version=old_version, code="x")
    statement = content_dir / "coding" / SLUG / "statement.md"
    statement.write_text(statement.read_text() + "\nOne more hint.\n")

    report = content_sync(content_dir)

    exercise.refresh_from_db()
    assert SLUG in report.updated
    assert exercise.current_version.number == old_version.number + 1
    assert "One more hint." in exercise.current_version.statement_en
    submission.refresh_from_db()
    assert submission.exercise_version == old_version
    assert "One more hint." not in submission.exercise_version.files["statement.md"]


def test_a_removed_exercise_is_retired_not_deleted(content_dir, make_user):
    content_sync(content_dir)
    exercise = Exercise.objects.get(slug=SLUG)
    Submission.objects.create(user=make_user(), exercise_version=exercise.current_version, code="x")
    import shutil

    shutil.rmtree(content_dir / "coding" / SLUG)
    report = content_sync(content_dir)
    exercise.refresh_from_db()
    assert SLUG in report.retired and exercise.retired
    assert exercise.versions.count() == 1 and Submission.objects.count() == 1


def test_folders_that_publishing_leaves_half_done_are_not_exercises(content_dir):
    """Publishing an upload stages a copy in coding/.staging-*; a sync running meanwhile skips it."""
    import shutil

    shutil.copytree(content_dir / "coding" / SLUG, content_dir / "coding" / ".staging-0123")
    report = content_sync(content_dir)
    assert not report.errors and ".staging-0123" not in report.created
    assert not Exercise.objects.filter(slug__startswith=".").exists()
    assert Exercise.objects.filter(slug=SLUG).count() == 1


def test_a_broken_exercise_is_reported_and_what_was_stored_stays(content_dir):
    content_sync(content_dir)
    before = Exercise.objects.get(slug=SLUG).current_version
    (content_dir / "coding" / SLUG / "exercise.toml").write_text("this is = = not toml")

    report = content_sync(content_dir)

    assert "exercise.toml" in report.errors[SLUG]
    exercise = Exercise.objects.get(slug=SLUG)
    assert exercise.current_version == before and not exercise.retired


def test_the_command_exits_non_zero_on_a_broken_exercise(content_dir, settings, capsys):
    settings.CONTENT_DIR = content_dir
    (content_dir / "coding" / SLUG / "exercise.toml").write_text("[limits]\nmemory_mb = '2G'\n")
    with pytest.raises(SystemExit):
        call_command("sync_content")
    assert "exercise.toml" in capsys.readouterr().err


def test_a_version_folder_is_rebuilt_from_the_database(content_dir, settings, tmp_path):
    settings.EXERCISE_CACHE_DIR = tmp_path / "cache"
    content_sync(content_dir)
    version = Exercise.objects.get(slug=SLUG).current_version
    folder = exercise_version_folder(version)
    assert (folder / "solution.py").read_text() == (content_dir / "coding" / SLUG / "solution.py").read_text()
    assert exercise_version_folder(version) == folder  # built once, then reused


def test_a_version_keeps_its_check_titles_and_older_versions_get_them_from_the_migration(content_dir):
    content_sync(content_dir)
    version = Exercise.objects.get(slug=SLUG).current_version
    assert version.check_titles["runs_the_article_example"] == {
        "en": "Runs the article's perceptron example", "zh-hans": "运行文章里的感知机例子"}
    published_before = {**version.check_titles}
    type(version).objects.filter(pk=version.pk).update(check_titles={})  # as stored before the field existed
    migration = importlib.import_module("catalog.migrations.0003_exerciseversion_check_titles")
    migration.fill_check_titles(apps, None)
    version.refresh_from_db()
    assert version.check_titles == published_before


def test_a_grading_reads_the_spec_stored_at_publish_and_validates_nothing(content_dir):
    content_sync(content_dir)
    version = Exercise.objects.get(slug=SLUG).current_version
    assert version.spec is not None and version.spec["id"] == SLUG
    version.files = {**version.files, "exercise.toml": "not toml ["}  # would fail any validation
    assert exercise_version_spec(version).checks_source == version.files["checks.py"]
    assert exercise_version_spec(version).limits.cpu_s == version.spec["limits"]["cpu_s"]


def test_the_migration_stores_the_spec_of_a_version_published_before(content_dir):
    content_sync(content_dir)
    version = Exercise.objects.get(slug=SLUG).current_version
    published = version.spec
    type(version).objects.filter(pk=version.pk).update(spec=None)  # as stored before the field existed
    importlib.import_module("catalog.migrations.0004_exerciseversion_spec").fill_specs(apps, None)
    version.refresh_from_db()
    assert version.spec == published
