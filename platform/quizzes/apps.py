from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class QuizzesConfig(AppConfig):
    """Topics, banks, questions, quiz attempts and reviews."""

    name = "quizzes"
    verbose_name = _("Quizzes")
