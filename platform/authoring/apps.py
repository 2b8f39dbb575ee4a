from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AuthoringConfig(AppConfig):
    """Instructors upload an exercise folder, watch it validate, preview it, publish it."""

    name = "authoring"
    verbose_name = _("Authoring")
