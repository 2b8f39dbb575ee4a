"""The grading CLI, for instructors and for our own checks.

    python -m grader grade EXERCISE_DIR SUBMISSION.py [--backend local|docker|auto] [--runtime runc|runsc] [--json]

Exit status 0 whenever a verdict was reached, whatever it is; 2 for a bad invocation or an
invalid exercise; 3 when the platform failed (INTERNAL_ERROR, or no sandbox).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from grader.host import SandboxConfigError, SandboxUnavailable, SpecError, get_sandbox, grade, load_exercise
from grader.host.verdict import Verdict

EXIT_PLATFORM_FAILED = 3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader", description="Grade a submission against an exercise.")
    commands = parser.add_subparsers(dest="command", required=True)
    grade_cmd = commands.add_parser("grade", help="grade SUBMISSION.py against EXERCISE_DIR")
    grade_cmd.add_argument("exercise", type=Path, metavar="EXERCISE_DIR")
    grade_cmd.add_argument("submission", type=Path, metavar="SUBMISSION.py")
    grade_cmd.add_argument("--backend", default="local", choices=["local", "docker", "auto"])
    grade_cmd.add_argument(
        "--runtime", choices=["runc", "runsc"], default=None,
        help="the Docker runtime: runc (default) or runsc, gVisor (docker and auto backends only)",
    )
    grade_cmd.add_argument("--json", action="store_true", help="print exactly one JSON object")
    grade_cmd.add_argument("--seed", type=int, default=None, help="the secret seed (default: random)")
    grade_cmd.add_argument(
        "--allow-unisolated", action="store_true",
        help="run without bubblewrap on a development machine (the student's code is NOT isolated)",
    )
    args = parser.parse_args(argv)

    try:
        exercise = load_exercise(args.exercise)
    except SpecError as error:
        print(f"error: {args.exercise}: {error}", file=sys.stderr)
        return 2
    try:
        code = args.submission.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        print(f"error: cannot read {args.submission}: {error}", file=sys.stderr)
        return 2
    if args.runtime and args.backend == "local":
        print("error: --runtime chooses a Docker runtime; use it with --backend docker (or auto)", file=sys.stderr)
        return 2
    options: dict[str, object] = {"allow_unisolated": True} if args.allow_unisolated else {}
    if args.runtime:
        options["runtime"] = args.runtime
    try:
        verdict = grade(exercise, code, get_sandbox(args.backend, **options), seed=args.seed)
    except SandboxConfigError as error:  # e.g. --allow-unisolated with --backend docker
        print(f"error: {error}", file=sys.stderr)
        return 2
    except SandboxUnavailable as error:
        print(f"error: the {args.backend} sandbox is not available: {error}", file=sys.stderr)
        return EXIT_PLATFORM_FAILED
    if args.json:
        print(json.dumps(verdict.to_dict(), ensure_ascii=False))
    else:
        print(human(verdict))
    return EXIT_PLATFORM_FAILED if verdict.is_internal_error else 0


def human(verdict: Verdict) -> str:
    """The verdict as a person reads it in a terminal."""
    lines = [f"{verdict.verdict}  score {verdict.score:.2f}  ({verdict.backend}, {verdict.usage.wall_s:.1f} s)"]
    for check in verdict.checks:
        mark = "PASS" if check.passed else "FAIL"
        where = "" if check.visible else " (hidden)"
        lines.append(f"  {mark}  {check.name}{where}  {check.points:g}/{check.max_points:g}")
        if check.message and not check.passed or check.message.startswith(("fast", "within")):
            lines.extend("        " + line for line in check.message.splitlines())
    for note in verdict.notes:
        lines.append(f"note: {note}")
    for name, text in (("stdout", verdict.stdout), ("stderr", verdict.stderr)):
        if text.strip():
            lines.append(f"--- your {name} ---")
            lines.append(text.rstrip())
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
