from django.core.management.base import BaseCommand

from interviews.services import interview_templates_sync
from quizzes.services import quiz_content_sync


class Command(BaseCommand):
    help = ("Load exercises/quizzes/ (topics, banks) and exercises/interviews/ (templates) into the "
            "database. Idempotent; run after sync_content, since templates name coding exercises.")

    def handle(self, *args, **options):
        quizzes = quiz_content_sync()
        interviews = interview_templates_sync(content=quizzes.content)
        self.stdout.write(
            f"questions: {len(quizzes.created)} created, {len(quizzes.updated)} updated, "
            f"{len(quizzes.unchanged)} unchanged, {len(quizzes.retired)} retired; "
            f"interview templates: {len(interviews.synced)} synced, {len(interviews.retired)} retired")
        errors = {**quizzes.errors, **interviews.errors}
        for problems in errors.values():
            for problem in problems:
                self.stderr.write(self.style.ERROR(problem))
        if errors:
            raise SystemExit(1)
