"""Loading exercises/ into the catalog; an upload's files as an exercise folder."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from django.conf import settings
from django.db import transaction

from catalog.models import Exercise, ExerciseUpload, ExerciseVersion
from grader.content_root import exercise_folders, folder_files
from grader.host import ExerciseSpec, SpecError, load_exercise, stored_spec, write_exercise_folder


@dataclasses.dataclass
class SyncReport:
    created: list[str] = dataclasses.field(default_factory=list)
    updated: list[str] = dataclasses.field(default_factory=list)
    unchanged: list[str] = dataclasses.field(default_factory=list)
    retired: list[str] = dataclasses.field(default_factory=list)
    errors: dict[str, str] = dataclasses.field(default_factory=dict)


def exercise_folder_files(path: Path) -> dict[str, str]:
    """Every text file of an exercise folder, by POSIX relative path; links are not followed."""
    return {relative: data.decode("utf-8") for relative, data in folder_files(path).items()}


@transaction.atomic
def exercise_version_ensure(spec: ExerciseSpec, files: dict[str, str]) -> tuple[Exercise, bool]:
    """Make ``spec`` the exercise's current version, adding a version only when content changed."""
    exercise, _ = Exercise.objects.select_for_update().get_or_create(
        uid=spec.id, defaults={"slug": spec.slug}
    )
    exercise.slug, exercise.retired = spec.slug, False
    version = exercise.versions.filter(digest=spec.digest).first()
    changed = version is None
    if changed:
        last = exercise.versions.order_by("-number").first()
        version = ExerciseVersion.objects.create(
            exercise=exercise,
            number=(last.number + 1) if last else 1,
            declared_version=spec.version,
            digest=spec.digest,
            title_en=spec.title["en"],
            title_zh=spec.title["zh-hans"],
            summary_en=spec.summary["en"],
            summary_zh=spec.summary["zh-hans"],
            statement_en=spec.statement["en"],
            statement_zh=spec.statement["zh-hans"],
            starter=spec.starter,
            difficulty=spec.difficulty,
            tags=list(spec.tags),
            points=spec.points,
            needs_gpu=spec.gpu,
            files=files,
            check_titles=spec.check_titles,
            spec=stored_spec(spec),
        )
    exercise.current_version = version
    exercise.save()
    return exercise, changed


def content_sync(content_dir: Path | None = None) -> SyncReport:
    """Mirror exercises/coding/ into the catalog. Idempotent; a broken folder changes nothing."""
    report = SyncReport()
    seen_uids: set[str] = set()
    for folder in exercise_folders(Path(content_dir or settings.CONTENT_DIR)):  # not publishing's .staging-*
        try:
            spec = load_exercise(folder)
            files = exercise_folder_files(folder)
        except (SpecError, UnicodeDecodeError) as error:
            report.errors[folder.name] = str(error)
            # Keep a broken exercise where it is rather than retiring it by accident.
            seen_uids.update(Exercise.objects.filter(slug=folder.name).values_list("uid", flat=True))
            continue
        seen_uids.add(spec.id)
        existed = Exercise.objects.filter(uid=spec.id).exists()
        _, changed = exercise_version_ensure(spec, files)
        bucket = report.unchanged if not changed else report.updated if existed else report.created
        bucket.append(spec.slug)
    for exercise in Exercise.objects.filter(retired=False).exclude(uid__in=seen_uids):
        exercise.retired = True
        exercise.save(update_fields=["retired"])
        report.retired.append(exercise.slug)
    return report


def upload_folder(upload: ExerciseUpload, parent: Path) -> Path:
    """The upload's files as an exercise folder named after its slug, under ``parent``."""
    return write_exercise_folder(upload.files, Path(parent) / upload.slug)
