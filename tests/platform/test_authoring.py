"""Instructors without git: upload a zipped exercise, see it validated, preview it, publish it."""
import io
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from catalog.models import Exercise, ExerciseUpload
from grading.work import upload_validate
from testbed.exercises import TOML, make_exercise
from tests.grader.factories import grading_sandbox

pytestmark = pytest.mark.django_db
WRONG = "def add(a, b):\n    return a - b\n"


@pytest.fixture
def content(content_dir, settings):
    settings.CONTENT_DIR = content_dir
    return content_dir


@pytest.fixture
def instructor(client, make_user):
    client.force_login(make_user("grace", role="instructor"))
    return client


MUTANT = '\n[mutants]\nsubtracts = "WRONG_ANSWER"\n'


def folder_zip(tmp_path: Path, *, toml: str = TOML + MUTANT, statement: str = "# Add\n\nAdd two numbers.\n") -> bytes:
    files = {"mutants/subtracts.py": WRONG, "statement.md": statement}
    folder = make_exercise(tmp_path / "tiny-adder", toml=toml, files=files)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, "tiny-adder/" + path.relative_to(folder).as_posix())
    return buffer.getvalue()


def upload(client, data: bytes, name="tiny-adder.zip"):
    return client.post(reverse("authoring:upload_list"), {"archive": SimpleUploadedFile(name, data, "application/zip")})


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_students_cannot_reach_the_authoring_pages(client, make_user, content):
    client.force_login(make_user())
    assert client.get(reverse("authoring:upload_list")).status_code == 403
    assert b"Authoring" not in client.get(reverse("submissions:exercise_list")).content


def test_instructors_find_the_page_in_the_navigation(instructor, content):
    page = instructor.get(reverse("submissions:exercise_list")).content.decode()
    assert reverse("authoring:upload_list") in page
    assert "Upload and validate" in instructor.get(reverse("authoring:upload_list")).content.decode()


def test_a_superuser_may_author_too_and_finds_the_page(client, django_user_model, content):
    client.force_login(django_user_model.objects.create_superuser("root", password="a-long-password-1"))
    assert reverse("authoring:upload_list") in client.get(reverse("submissions:exercise_list")).content.decode()
    assert client.get(reverse("authoring:upload_list")).status_code == 200


def _zip(entries, links=()):
    import stat

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        for name in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


@pytest.mark.parametrize(
    "data, reason",
    [
        (_zip({"exercise.toml": "x", "../../outside.py": "x"}), "would leave the exercise folder"),
        (_zip({"exercise.toml": "x"}, links=["solution.py"]), "a symbolic link"),
        (_zip({"exercise.toml": "x", "checks.py": b"0" * 500_000}), "zip bomb"),
        (_zip({"exercise.toml": "x", "statement.md": "a" * 600_000}), "one file may have at most"),
        (b"MZ\x90\x00 not a zip", "not a zip file"),
    ],
    ids=["traversal", "link", "bomb", "huge-file", "not-a-zip"],
)
def test_a_hostile_zip_is_refused_with_a_reason_and_nothing_changes(instructor, content, data, reason):
    before = snapshot(content)
    response = upload(instructor, data)
    assert response.status_code == 400
    assert reason in response.content.decode()
    assert ExerciseUpload.objects.count() == 0 and Exercise.objects.count() == 0
    assert snapshot(content) == before


def test_an_invalid_folder_is_kept_with_the_message_validate_content_gives(instructor, content, tmp_path):
    data = folder_zip(tmp_path, toml=TOML.replace("memory_mb = 256", 'memory_mb = "2G"'))
    response = upload(instructor, data)
    stored = ExerciseUpload.objects.get()
    assert response.status_code == 302 and stored.status == "invalid"
    page = instructor.get(response.url).content.decode()
    assert "exercise.toml: [limits].memory_mb must be a number, got &quot;2G&quot;" in page
    assert reverse("authoring:upload_publish", args=[stored.id]) not in page


def test_upload_validate_preview_publish(
        instructor, content, tmp_path, requires, django_capture_on_commit_callbacks, client, make_user):
    sandbox = grading_sandbox("docker-runc", requires)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = upload(instructor, folder_zip(tmp_path))
    stored = ExerciseUpload.objects.get()
    assert response.status_code == 302 and stored.status == "queued" and stored.slug == "tiny-adder"
    assert len(callbacks) == 1  # validation is queued once the upload is committed
    assert 'hx-trigger="every 2s"' in instructor.get(response.url).content.decode()

    upload_validate(upload_id=stored.id, sandbox=sandbox)
    stored.refresh_from_db()
    assert stored.status == "valid", stored.report
    page = instructor.get(response.url).content.decode()
    assert "mutant:subtracts" in page and "WRONG_ANSWER" in page and "Publish to students" in page

    english = instructor.get(reverse("authoring:upload_preview", args=[stored.id]) + "?lang=en").content.decode()
    chinese = instructor.get(reverse("authoring:upload_preview", args=[stored.id]) + "?lang=zh-hans").content.decode()
    assert "<h1>Add</h1>" in english and "Add two numbers." in english and "return 0" in english
    assert "<h1>加法</h1>" in chinese
    assert not (content / "coding" / "tiny-adder").exists() and not Exercise.objects.filter(slug="tiny-adder").exists()

    published = instructor.post(reverse("authoring:upload_publish", args=[stored.id]))
    exercise = Exercise.objects.get(slug="tiny-adder")
    assert published.status_code == 302 and published.url == reverse("submissions:exercise_detail", args=["tiny-adder"])
    assert (content / "coding" / "tiny-adder" / "mutants" / "subtracts.py").read_text() == WRONG
    assert exercise.current_version.statement_en == "# Add\n\nAdd two numbers.\n"
    stored.refresh_from_db()
    assert stored.status == "published" and stored.published_version == exercise.current_version
    assert stored.digest == exercise.current_version.digest  # one digest of a folder, wherever it came from

    client.force_login(make_user("ada"))
    page = client.get(reverse("submissions:exercise_detail", args=["tiny-adder"])).content.decode()
    assert "Add two numbers." in page


def test_only_a_valid_upload_can_be_published(instructor, content, tmp_path):
    response = upload(instructor, folder_zip(tmp_path))
    stored = ExerciseUpload.objects.get()
    result = instructor.post(reverse("authoring:upload_publish", args=[stored.id]), follow=True)
    assert "Only a validated upload can be published." in result.content.decode()
    assert not (content / "coding" / "tiny-adder").exists() and response.status_code == 302


def test_publishing_over_a_different_exercise_is_refused(instructor, content, tmp_path):
    data = folder_zip(tmp_path, toml=TOML.replace('id = "tiny-adder"', 'id = "static-graph-executor"') + MUTANT)
    upload(instructor, data)
    stored = ExerciseUpload.objects.get()
    ExerciseUpload.objects.filter(id=stored.id).update(status="valid", slug="static-graph-executor", uid="other-id")
    before = snapshot(content)
    result = instructor.post(reverse("authoring:upload_publish", args=[stored.id]), follow=True)
    assert "already holds a different exercise" in result.content.decode()
    assert snapshot(content) == before


def test_an_instructor_sees_only_their_own_uploads(instructor, content, tmp_path, client, make_user):
    upload(instructor, folder_zip(tmp_path))
    stored = ExerciseUpload.objects.get()
    other = make_user("linus", role="instructor")
    client.force_login(other)
    assert client.get(reverse("authoring:upload_detail", args=[stored.id])).status_code == 404


def test_an_upload_with_a_published_exercises_id_says_it_replaces_it(instructor, content, tmp_path, exercise):
    """Issue 28, fix 9: such a zip validated and offered "Publish" with no word of what it replaces."""
    upload(instructor, folder_zip(tmp_path))
    stored = ExerciseUpload.objects.get()
    detail = reverse("authoring:upload_detail", args=[stored.id])
    ExerciseUpload.objects.filter(id=stored.id).update(status="valid")
    page = instructor.get(detail).content.decode()
    assert 'id="replaces"' not in page and "Publish to students" in page
    ExerciseUpload.objects.filter(id=stored.id).update(uid=exercise.uid)
    page = instructor.get(detail).content.decode()
    title = exercise.current_version.title
    assert 'id="replaces"' in page and f"Publish as the new version of “{title}”" in page
    assert "return confirm(" in page
