"""The host side of grading: what the platform and the command line use.

    spec = load_exercise("exercises/coding/scalar-autograd")
    verdict = grade(spec, code, get_sandbox("local"))

Exercise specs (spec.py), the pipeline that runs the judge in a sandbox (pipeline.py), the
verdict it reaches (verdict.py), proving content (validation.py), taking exercise
folders in as zip files (archive.py) and running (not grading) a program (playground.py).
The sandbox names the platform needs come from here too: the platform reaches the sandbox only through the grader.
"""
from grader.host.archive import (
    ARCHIVE_LIMITS,
    ArchiveLimits,
    UnsafeArchive,
    read_exercise_zip,
    write_exercise_folder,
)
from grader.host.pipeline import grade
from grader.host.playground import RunResult, run_compile_flow, run_program
from grader.host.spec import ExerciseSpec, SpecError, load_exercise
from grader.host.validation import (
    ContentReport,
    ExerciseReport,
    RunReport,
    validate_content,
    validate_exercise,
)
from grader.host.verdict import Usage, Verdict
from sandbox import Sandbox, SandboxUnavailable, get_sandbox

__all__ = [
    "ARCHIVE_LIMITS", "ArchiveLimits", "ContentReport", "ExerciseReport", "ExerciseSpec", "RunReport",
    "RunResult", "Sandbox", "SandboxUnavailable", "SpecError", "UnsafeArchive", "Usage", "Verdict",
    "get_sandbox", "grade", "load_exercise", "read_exercise_zip", "run_compile_flow", "run_program",
    "validate_content", "validate_exercise", "write_exercise_folder",
]
