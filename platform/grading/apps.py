from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class GradingConfig(AppConfig):
    """The one owner of grading in the platform: submissions, the sandbox, tasks, retries."""

    name = "grading"
    verbose_name = _("Grading")
