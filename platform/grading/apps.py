from celery.signals import worker_init
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _

from grading import checks  # registers the system check; needs settings only, no models


class GradingConfig(AppConfig):
    """The one owner of grading in the platform: submissions, the sandbox, tasks, retries."""

    name = "grading"
    verbose_name = _("Grading")

    def ready(self) -> None:
        worker_init.connect(checks.refuse_bad_grading_times, weak=False)
