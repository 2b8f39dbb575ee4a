from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ProgressConfig(AppConfig):
    """The account page's record: recent submissions and their verdicts, lessons read, exercises accepted,
    quiz scores."""

    name = "progress"
    verbose_name = _("Progress")
