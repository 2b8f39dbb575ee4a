from django.core.management.base import BaseCommand

from lessons.services import lessons_sync


class Command(BaseCommand):
    help = ("Load exercises/lessons/ into the database (idempotent; a changed lesson gets a new version). "
            "Run after sync_content and sync_quizzes: lessons name exercises and quiz questions.")

    def handle(self, *args, **options):
        report = lessons_sync()
        for label in ("created", "updated", "unchanged", "retired"):
            slugs = getattr(report, label)
            if slugs:
                self.stdout.write(f"{label}: {', '.join(slugs)}")
        for problems in report.errors.values():
            for problem in problems:
                self.stderr.write(self.style.ERROR(problem))
        if report.errors:
            raise SystemExit(1)
