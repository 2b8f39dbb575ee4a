"""The exercise version a submission was made against, as a folder the judge can load."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from django.conf import settings

from catalog.models import ExerciseVersion
from grader.host import ExerciseSpec, SpecError, load_exercise, spec_from_stored


def exercise_version_folder(version: ExerciseVersion) -> Path:
    """The exercise folder of ``version`` on local disk, rebuilt from the database once."""
    folder = Path(settings.EXERCISE_CACHE_DIR) / version.digest
    if folder.is_dir():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=folder.parent))
    for relative, text in version.files.items():
        target = (staging / relative).resolve()
        if not target.is_relative_to(staging.resolve()):
            raise ValueError(f"{version}: file path {relative!r} leaves the exercise folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    try:
        os.rename(staging, folder)  # atomic: a concurrent worker sees all of it or none
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)  # another worker won the race
    return folder


def exercise_version_spec(version: ExerciseVersion) -> ExerciseSpec:
    """The spec the judge grades against: the one validated when the version was published,
    with the version's own files (not today's exercises/); nothing is validated again."""
    if version.spec is not None:
        try:
            return spec_from_stored(version.spec, version.files, Path(settings.EXERCISE_CACHE_DIR) / version.digest)
        except SpecError:
            pass  # stored by another format of the spec: load it from its files as before
    return load_exercise(exercise_version_folder(version))
