from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class LessonsConfig(AppConfig):
    """The article's lessons, progress, the lesson quiz and the playground's runs."""

    name = "lessons"
    verbose_name = _("Lessons")
