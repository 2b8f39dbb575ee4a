from django.core.management.base import BaseCommand

from catalog.services import content_sync


class Command(BaseCommand):
    help = "Load exercises/ into the catalog (idempotent; changed exercises get a new version)."

    def handle(self, *args, **options):
        report = content_sync()
        for label in ("created", "updated", "unchanged", "retired"):
            slugs = getattr(report, label)
            if slugs:
                self.stdout.write(f"{label}: {', '.join(slugs)}")
        for slug, error in report.errors.items():
            self.stderr.write(self.style.ERROR(f"{slug}: {error}"))
        if report.errors:
            raise SystemExit(1)
