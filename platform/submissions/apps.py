from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "submissions"

    def ready(self) -> None:
        from celery.signals import worker_init

        from submissions import checks  # noqa: F401  (registers the system check)

        worker_init.connect(_refuse_bad_grading_times, weak=False)


def _refuse_bad_grading_times(**kwargs) -> None:
    """A worker does not start with grading times that would lose or double gradings."""
    from django.core.exceptions import ImproperlyConfigured

    from submissions.checks import grading_times_problems

    if problems := grading_times_problems():
        raise ImproperlyConfigured("; ".join(problems))
