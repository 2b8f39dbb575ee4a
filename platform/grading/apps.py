from celery.signals import worker_init, worker_process_shutdown, worker_shutdown
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _

from grading import checks, sandboxes  # checks registers the system check; both need settings only, no models


class GradingConfig(AppConfig):
    """The one owner of grading in the platform: submissions, the sandbox, tasks, retries."""

    name = "grading"
    verbose_name = _("Grading")

    def ready(self) -> None:
        worker_init.connect(checks.refuse_bad_grading_times, weak=False)
        worker_init.connect(checks.refuse_bad_sandbox_settings, weak=False)
        # A warm pool lives as long as its worker: removed when the worker (or one of its pool
        # processes) stops, and a starting worker removes what a killed one left.
        worker_init.connect(sandboxes.orphaned_containers_remove, weak=False)
        worker_process_shutdown.connect(sandboxes.grading_sandboxes_close, weak=False)
        worker_shutdown.connect(sandboxes.grading_sandboxes_close, weak=False)
