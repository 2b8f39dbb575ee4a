"""The host side of grading: what the platform and the command line use.

    spec = load_exercise("exercises/coding/scalar-autograd")
    verdict = grade(spec, code, get_sandbox("local"))

The platform imports these names from here, never from the modules behind them, and it
reaches the sandbox only through here (platform → grader → sandbox).
"""
from grader.content import (
    ARCHIVE_LIMITS,
    ArchiveLimits,
    ContentReport,
    ExerciseReport,
    RunReport,
    UnsafeArchive,
    read_exercise_zip,
    validate_content,
    validate_exercise,
    write_exercise_folder,
)
from grader.pipeline import grade
from grader.spec import ExerciseSpec, SpecError, load_exercise
from grader.verdict import Usage, Verdict
from sandbox import Sandbox, SandboxUnavailable, get_sandbox

__all__ = [
    "ARCHIVE_LIMITS", "ArchiveLimits", "ContentReport", "ExerciseReport", "ExerciseSpec", "RunReport", "Sandbox",
    "SandboxUnavailable", "SpecError", "UnsafeArchive", "Usage", "Verdict", "get_sandbox", "grade", "load_exercise",
    "read_exercise_zip", "validate_content", "validate_exercise", "write_exercise_folder",
]
