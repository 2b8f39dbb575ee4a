"""Instructors without git: upload an exercise folder as a zip, validate it, preview it, publish it.

An upload is proven exactly like a folder in exercises/ (grader.host.validate_exercise:
the solution ACCEPTED, the starter not, every mutant its declared verdict). Publishing writes
the folder into CONTENT_DIR/coding/<slug>, so sync_content, CI and git see the same content,
and makes it the exercise's current version in the catalog.
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
from django.utils import timezone
from django.utils.translation import gettext as _

from catalog.models import Exercise, ExerciseUpload
from catalog.services import exercise_folder_files, exercise_version_ensure
from grader.content_root import files_digest
from grader.host import (
    ExerciseReport,
    ExerciseSpec,
    SpecError,
    UnsafeArchive,
    load_exercise,
    read_exercise_zip,
    validate_exercise,
    write_exercise_folder,
)


def _require_instructor(user) -> None:
    if not (getattr(user, "is_instructor", False) or getattr(user, "is_superuser", False)):
        raise PermissionDenied(_("Only instructors can author exercises."))


def upload_create(*, user, data: bytes, filename: str = "") -> ExerciseUpload:
    """Check an uploaded zip and store it as a pending upload, queued for validation.

    A hostile or malformed archive raises ValidationError with the reason and stores nothing.
    A folder whose exercise.toml (or any other file) is invalid is stored with its error, so
    the instructor sees it next to the upload, as they would see it from the command line.
    """
    _require_instructor(user)
    try:
        raw = read_exercise_zip(data)
    except UnsafeArchive as error:
        raise ValidationError(_("The archive was refused: %(reason)s"), params={"reason": str(error)}) from None
    files = {path: content.decode("utf-8") for path, content in raw.items()}
    slug = Path(filename).stem if filename else "exercise"
    with tempfile.TemporaryDirectory(prefix="upload-") as tmp:
        try:
            spec = load_exercise(write_exercise_folder(files, Path(tmp) / slug))
        except SpecError as error:
            spec, problem = None, str(error)
    upload = ExerciseUpload.objects.create(
        uploaded_by=user,
        slug=(spec.id if spec else _slugish(slug)),
        uid=spec.id if spec else "",
        digest=files_digest(files),
        files=files,
        status=ExerciseUpload.Status.QUEUED if spec else ExerciseUpload.Status.INVALID,
        error="" if spec else problem,
    )
    if spec is not None:
        from catalog.tasks import validate_upload

        transaction.on_commit(lambda: validate_upload.delay(upload.id))
    return upload


def _slugish(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "-" else "-" for c in name.lower()).strip("-")
    return cleaned[:100] or "exercise"


def upload_folder(upload: ExerciseUpload, parent: Path) -> Path:
    """The upload's files as an exercise folder named after its slug, under ``parent``."""
    return write_exercise_folder(upload.files, Path(parent) / upload.slug)


def upload_spec(upload: ExerciseUpload) -> ExerciseSpec:
    with tempfile.TemporaryDirectory(prefix="upload-") as tmp:
        return load_exercise(upload_folder(upload, Path(tmp)))


def upload_validate(*, upload_id: int, sandbox=None) -> ExerciseUpload:
    """Prove the upload in the sandbox, exactly as validate_content proves a folder."""
    claimed = ExerciseUpload.objects.filter(id=upload_id, status=ExerciseUpload.Status.QUEUED).update(
        status=ExerciseUpload.Status.VALIDATING
    )
    upload = ExerciseUpload.objects.get(id=upload_id)
    if not claimed:
        return upload  # another worker has it, or it is done
    if sandbox is None:
        from submissions.services import grading_sandbox

        sandbox = grading_sandbox()
    try:
        with tempfile.TemporaryDirectory(prefix="upload-") as tmp:
            report = validate_exercise(upload_folder(upload, Path(tmp)), sandbox)
    except BaseException:  # a platform fault (e.g. SandboxUnavailable): queued again for the retry
        ExerciseUpload.objects.filter(id=upload_id).update(status=ExerciseUpload.Status.QUEUED)
        raise
    upload.report = report.to_dict()
    upload.error = report.error
    upload.status = ExerciseUpload.Status.VALID if report.ok and not report.skipped else ExerciseUpload.Status.INVALID
    if report.skipped:
        upload.error = report.skipped
    upload.validated_at = timezone.now()
    upload.save(update_fields=["report", "error", "status", "validated_at"])
    return upload


def upload_report(upload: ExerciseUpload) -> ExerciseReport | None:
    return ExerciseReport.from_dict(upload.report) if upload.report else None


def upload_publish(*, user, upload: ExerciseUpload) -> Exercise:
    """Write a validated upload into CONTENT_DIR/coding/<slug> and make it the current version."""
    _require_instructor(user)
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


def uploads_of(user):
    """An instructor's uploads, newest first (every upload for a superuser)."""
    uploads = ExerciseUpload.objects.select_related("uploaded_by", "published_version")
    return uploads if getattr(user, "is_superuser", False) else uploads.filter(uploaded_by=user)
