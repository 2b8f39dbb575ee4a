"""python manage.py validate_content [SLUG ...] [--json]: prove the content in the sandbox.

For every exercise (or those named): the solution must be ACCEPTED, the starter must not be,
and every mutant must get the verdict exercise.toml declares. With no slugs, the quiz banks
are validated too. Exit status 1 when anything failed, so CI can run it as is.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from grader.host import ContentReport, ExerciseReport, SandboxUnavailable, validate_content
from grader.lessons import validate_lessons
from grading.sandboxes import sandbox_new


class Command(BaseCommand):
    help = "Validate exercises in the sandbox: solution ACCEPTED, starter not, mutants as declared; and the quiz banks."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slugs", nargs="*", metavar="SLUG", help="exercise folders to validate (default: all)")
        parser.add_argument("--json", action="store_true", help="print one JSON document instead of a report")
        parser.add_argument("--content-dir", type=Path, default=None, help="default: settings.CONTENT_DIR")
        parser.add_argument("--backend", default=None, choices=["local", "docker", "auto"],
                            help="sandbox backend (default: settings.SANDBOX_BACKEND)")
        parser.add_argument("--pool", type=int, default=1, help="warm Docker containers kept ready (default 1)")
        parser.add_argument("--gpu", choices=["auto", "yes", "no"], default="auto",
                            help="validate gpu = true exercises (auto: when this host has an NVIDIA GPU)")
        parser.add_argument("--no-quizzes", action="store_true", help="skip the quiz banks")
        parser.add_argument("--no-lessons", action="store_true", help="skip the lessons")

    def handle(self, *args: object, **options: Any) -> None:
        content_dir = options["content_dir"] or Path(settings.CONTENT_DIR)
        backend = options["backend"] or settings.SANDBOX_BACKEND
        try:
            sandbox = sandbox_new(backend, pool_size=max(0, options["pool"]))
        except SandboxUnavailable as error:
            raise CommandError(f"the {backend} sandbox is not available: {error}") from None
        gpu = {"auto": None, "yes": True, "no": False}[options["gpu"]]
        quizzes = False if options["no_quizzes"] else None
        as_json = options["json"]
        try:
            report = validate_content(
                content_dir, sandbox, slugs=options["slugs"], gpu=gpu, quizzes=quizzes,
                progress=None if as_json else self._print_exercise,
            )
            # Lessons go with the quiz banks: validated when no exercise was named.
            lessons = None if options["slugs"] or options["no_lessons"] else validate_lessons(content_dir, sandbox)
        except FileNotFoundError as error:
            raise CommandError(str(error)) from None
        finally:
            close = getattr(sandbox, "close", None)
            if close is not None:
                close()
        lessons_ok = not lessons or not any(lessons.values())
        if as_json:
            self.stdout.write(json.dumps({**report.to_dict(), "lessons": lessons}, ensure_ascii=False, indent=1))
        else:
            self._print_lessons(lessons)
            self._print_summary(report)
        if not report.ok or not lessons_ok:
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

    def _print_exercise(self, exercise: ExerciseReport) -> None:
        if exercise.skipped:
            self.stdout.write(self.style.WARNING(f"SKIP  {exercise.slug}: {exercise.skipped}"))
            return
        mark = self.style.SUCCESS("ok  ") if exercise.ok else self.style.ERROR("FAIL")
        self.stdout.write(f"{mark}  {exercise.slug}  ({exercise.seconds:.1f} s)")
        if exercise.error:
            self.stdout.write(self.style.ERROR(f"      {exercise.error}"))
        for run in exercise.runs:
            again = f", {run.attempts} attempts" if run.attempts > 1 else ""
            state = "ok  " if run.ok else "FAIL"
            line = f"      {state}  {run.program}: {run.got} (expected {run.expected}{again}, {run.seconds:.1f} s)"
            self.stdout.write(line if run.ok else self.style.ERROR(line))
            if not run.ok and run.detail:
                for detail in run.detail.splitlines()[:12]:
                    self.stdout.write(f"            {detail}")

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
