from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class InterviewsConfig(AppConfig):
    """Mock interviews: sessions drawn from templates, their answers and scorecards."""

    name = "interviews"
    verbose_name = _("Mock interviews")
