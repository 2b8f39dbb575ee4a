"""Instructors without git: upload an exercise folder as a zip, validate it, preview it, publish it.

An upload is proven exactly like a folder in exercises/ (grader.host.validate_exercise:
the solution ACCEPTED, the starter not, every mutant its declared verdict) by the grading
app's validate_upload task. Publishing writes the folder into CONTENT_DIR/coding/<slug>, so
sync_content, CI and git see the same content, and makes it the exercise's current version.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from accounts.models import User
from catalog.models import Exercise, ExerciseUpload
from catalog.services import exercise_folder_files, exercise_version_ensure, upload_folder
from grader.content_root import folder_digest
from grader.host import ExerciseSpec, SpecError, UnsafeArchive, load_exercise, read_exercise_zip, write_exercise_folder
from grading.services import upload_validation_queue


def author_check(user: User) -> None:
    """Only instructors (and superusers) author exercises: PermissionDenied for anyone else."""
    if not getattr(user, "can_author", False):  # an anonymous user has no such attribute
        raise PermissionDenied(_("Only instructors can author exercises."))


def upload_create(*, user: User, data: bytes, filename: str = "") -> ExerciseUpload:
    """Check an uploaded zip and store it as a pending upload, queued for validation.

    A hostile or malformed archive raises ValidationError with the reason and stores nothing.
    A folder whose exercise.toml (or any other file) is invalid is stored with its error, so
    the instructor sees it next to the upload, as they would see it from the command line.
    """
    author_check(user)
    try:
        raw = read_exercise_zip(data)
    except UnsafeArchive as error:
        raise ValidationError(_("The archive was refused: %(reason)s"), params={"reason": str(error)}) from None
    files: dict[str, bytes | str] = {path: content.decode("utf-8") for path, content in raw.items()}
    slug = Path(filename).stem if filename else "exercise"
    with tempfile.TemporaryDirectory(prefix="upload-") as tmp:
        folder = write_exercise_folder(files, Path(tmp) / slug)
        digest = folder_digest(folder)  # as an exercise version's: equal digests, equal content
        try:
            spec = load_exercise(folder)
        except SpecError as error:
            spec, problem = None, str(error)
    upload = ExerciseUpload.objects.create(
        uploaded_by=user,
        slug=(spec.id if spec else _slugish(slug)),
        uid=spec.id if spec else "",
        digest=digest,
        files=files,
        status=ExerciseUpload.Status.QUEUED if spec else ExerciseUpload.Status.INVALID,
        error="" if spec else problem,
    )
    if spec is not None:
        upload_validation_queue(upload)
    return upload


def _slugish(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "-" else "-" for c in name.lower()).strip("-")
    return cleaned[:100] or "exercise"


def upload_spec(upload: ExerciseUpload) -> ExerciseSpec:
    with tempfile.TemporaryDirectory(prefix="upload-") as tmp:
        return load_exercise(upload_folder(upload, Path(tmp)))


def upload_publish(*, user: User, upload: ExerciseUpload) -> Exercise:
    """Write a validated upload into CONTENT_DIR/coding/<slug> and make it the current version."""
    author_check(user)
    if upload.status != ExerciseUpload.Status.VALID:
        raise ValidationError(_("Only a validated upload can be published."))
    coding = Path(settings.CONTENT_DIR) / "coding"
    target = coding / upload.slug
    if target.is_dir():
        try:
            existing = load_exercise(target).id
        except SpecError:
            existing = None
        if existing != upload.uid:
            raise ValidationError(
                _("The folder %(slug)s already holds a different exercise; rename the exercise id."),
                params={"slug": upload.slug},
            )
    coding.mkdir(parents=True, exist_ok=True)
    staging = coding / f".staging-{uuid.uuid4().hex}"
    write_exercise_folder(upload.files, staging)
    files = exercise_folder_files(staging)
    retired = coding / f".old-{uuid.uuid4().hex}"
    if target.exists():
        os.rename(target, retired)  # two renames: the folder is never half-written
    os.rename(staging, target)
    shutil.rmtree(retired, ignore_errors=True)
    spec = load_exercise(target)
    with transaction.atomic():
        exercise, _changed = exercise_version_ensure(spec, files)
        upload.status = ExerciseUpload.Status.PUBLISHED
        upload.published_version = exercise.current_version
        upload.save(update_fields=["status", "published_version"])
    return exercise
