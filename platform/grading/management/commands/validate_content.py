"""python manage.py validate_content [SLUG ...] [--json] [--jobs N]: prove the content in the sandbox.

For every exercise (or those named): the solution must be ACCEPTED, the starter must not be,
and every mutant must get the verdict exercise.toml declares. With no slugs, the quiz banks
and the lessons are validated too. Exit status 1 when anything failed, so CI can run it as is.
Up to --jobs sandbox runs go at once (default: as many as the cores here hold); one line per
exercise is printed as it finishes, and the JSON report is in content order whatever --jobs is.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from grader.host import ContentReport, ExerciseReport, SandboxUnavailable, default_jobs, validate_content
from grading.sandboxes import sandbox_new


class Command(BaseCommand):
    _failed = 0  # exercises reported failed so far, for the progress lines

    help = "Validate exercises in the sandbox: solution ACCEPTED, starter not, mutants as declared; and the quiz banks."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slugs", nargs="*", metavar="SLUG", help="exercise folders to validate (default: all)")
        parser.add_argument("--json", action="store_true", help="print one JSON document instead of a report")
        parser.add_argument("--content-dir", type=Path, default=None, help="default: settings.CONTENT_DIR")
        parser.add_argument("--backend", default=None, choices=["local", "docker", "auto"],
                            help="sandbox backend (default: settings.SANDBOX_BACKEND)")
        parser.add_argument("--jobs", "-j", type=int, default=None,
                            help="sandbox runs at once (default: the cores here over one sandbox's CPU share)")
        parser.add_argument("--pool", type=int, default=None,
                            help="warm Docker containers kept ready per container shape (default: --jobs)")
        parser.add_argument("--gpu", choices=["auto", "yes", "no"], default="auto",
                            help="validate gpu = true exercises (auto: when this host has an NVIDIA GPU)")
        parser.add_argument("--no-quizzes", action="store_true", help="skip the quiz banks")
        parser.add_argument("--no-lessons", action="store_true", help="skip the lessons")

    def handle(self, *args: object, **options: Any) -> None:
        content_dir = options["content_dir"] or Path(settings.CONTENT_DIR)
        backend = options["backend"] or settings.SANDBOX_BACKEND
        jobs = default_jobs() if options["jobs"] is None else options["jobs"]
        if jobs < 1:
            raise CommandError(f"--jobs must be at least 1, got {jobs}")
        pool = jobs if options["pool"] is None else max(0, options["pool"])
        try:
            sandbox = sandbox_new(backend, pool_size=pool)
        except SandboxUnavailable as error:
            raise CommandError(f"the {backend} sandbox is not available: {error}") from None
        gpu = {"auto": None, "yes": True, "no": False}[options["gpu"]]
        as_json = options["json"]
        self._failed = 0
        if not as_json:
            self.stdout.write(f"validating with {jobs} job(s) at once, {pool} warm container(s) per shape")
            self.stdout.flush()
        try:
            report = validate_content(
                content_dir, sandbox, slugs=options["slugs"], gpu=gpu,
                quizzes=False if options["no_quizzes"] else None, lessons=False if options["no_lessons"] else None,
                jobs=jobs, progress=None if as_json else self._print_exercise,
            )
        except FileNotFoundError as error:
            raise CommandError(str(error)) from None
        finally:
            sandbox.close()
        if as_json:
            self.stdout.write(json.dumps(report.to_dict(), ensure_ascii=False, indent=1))
        else:
            self._print_lessons(report.lessons)
            self._print_summary(report)
        if not report.ok:
            raise SystemExit(1)

    def _print_lessons(self, lessons: dict[str, list[str]] | None) -> None:
        if lessons is None:
            return
        problems = [message for messages in lessons.values() for message in messages]
        if not problems:
            self.stdout.write(self.style.SUCCESS("ok  ") + f"  lessons ({len(lessons)} folders, every code block run)")
            return
        self.stdout.write(self.style.ERROR(f"FAIL  lessons: {len(problems)} problem(s)"))
        for message in problems[:50]:
            self.stdout.write(f"      {message}")

    def _print_exercise(self, exercise: ExerciseReport, done: int, total: int) -> None:
        # In the order they finish (the JSON report keeps content order), with a count.
        count = f"[{done:>{len(str(total))}}/{total}]"
        if not exercise.ok:
            self._failed += 1
        failed = f", {self._failed} failed" if self._failed else ""
        if exercise.skipped:
            self.stdout.write(self.style.WARNING(f"SKIP  {exercise.slug}: {exercise.skipped}  {count}"))
            self.stdout.flush()
            return
        mark = self.style.SUCCESS("ok  ") if exercise.ok else self.style.ERROR("FAIL")
        runs = f"{len(exercise.runs)} programs, {exercise.seconds:.1f} s of gradings"
        self.stdout.write(f"{mark}  {exercise.slug}  ({runs})  {count}{failed}")
        if exercise.error:
            for line in exercise.error.splitlines():
                self.stdout.write(self.style.ERROR(f"      {line}"))
        for run in exercise.runs:
            again = f", {run.attempts} attempts" if run.attempts > 1 else ""
            state = "ok  " if run.ok else "FAIL"
            line = f"      {state}  {run.program}: {run.got} (expected {run.expected}{again}, {run.seconds:.1f} s)"
            self.stdout.write(line if run.ok else self.style.ERROR(line))
            if not run.ok and run.detail:
                for detail in run.detail.splitlines()[:12]:
                    self.stdout.write(f"            {detail}")
        self.stdout.flush()  # a progress line is for now, also when the output is a CI log or a pipe

    def _print_summary(self, report: ContentReport) -> None:
        if report.quizzes is not None:
            problems = [message for messages in report.quizzes.values() for message in messages]
            if problems:
                self.stdout.write(self.style.ERROR(f"FAIL  quiz banks: {len(problems)} problem(s)"))
                for message in problems[:50]:
                    self.stdout.write(f"      {message}")
            else:
                self.stdout.write(self.style.SUCCESS("ok  ") + f"  quiz banks ({len(report.quizzes)} files)")
        failed = [e.slug for e in report.exercises if not e.ok]
        skipped = [e.slug for e in report.exercises if e.skipped]
        proven = len(report.exercises) - len(failed) - len(skipped)
        summary = f"{proven} exercise(s) proven, {len(failed)} failed, {len(skipped)} skipped in {report.seconds:.0f} s"
        if report.ok:
            self.stdout.write(self.style.SUCCESS(summary))
        else:
            self.stdout.write(self.style.ERROR(summary + ": " + ", ".join(failed)))
