"""The host side of grading: what the platform and the command line use.

    spec = load_exercise("exercises/coding/scalar-autograd")
    verdict = grade(spec, code, get_sandbox("local"))

Exercise specs (spec.py), the pipeline that runs the judge in a sandbox (pipeline.py), the
verdict it reaches (verdict.py), proving content (validation.py), taking exercise
folders in as zip files (archive.py), running (not grading) a program (grader.playground) and
a practice run of the visible checks only (practice.py), and re-measuring the top of a
leaderboard in one session (remeasure.py).
The sandbox names the platform needs come from here too: the platform reaches the sandbox only through the grader.
"""
from grader.host.archive import (
    ARCHIVE_LIMITS,
    ArchiveLimits,
    UnsafeArchive,
    read_exercise_zip,
    write_exercise_folder,
)
from grader.host.pipeline import Attempt, grade
from grader.host.practice import visible_only
from grader.host.remeasure import Remeasured, remeasure
from grader.host.spec import ExerciseSpec, SpecError, check_titles, load_exercise, spec_from_stored, stored_spec
from grader.host.validation import (
    ContentReport,
    ExerciseReport,
    RunReport,
    default_jobs,
    validate_content,
    validate_exercise,
)
from grader.host.verdict import Usage, Verdict
from grader.playground import RunResult, run_compile_flow, run_program
from sandbox import (
    AutoConfig,
    DockerConfig,
    LocalConfig,
    Sandbox,
    SandboxConfig,
    SandboxConfigError,
    SandboxUnavailable,
    get_sandbox,
    open_sandbox,
    remove_orphaned_containers,
)

__all__ = [
    "ARCHIVE_LIMITS", "ArchiveLimits", "Attempt", "AutoConfig", "ContentReport", "DockerConfig", "ExerciseReport",
    "ExerciseSpec", "LocalConfig", "Remeasured", "RunReport", "RunResult", "Sandbox", "SandboxConfig",
    "SandboxConfigError", "SandboxUnavailable", "SpecError", "UnsafeArchive", "Usage", "Verdict",
    "check_titles", "default_jobs", "get_sandbox", "grade", "load_exercise", "open_sandbox", "read_exercise_zip",
    "remeasure", "remove_orphaned_containers", "run_compile_flow", "run_program",
    "spec_from_stored", "stored_spec", "validate_content", "validate_exercise", "visible_only", "write_exercise_folder",
]
