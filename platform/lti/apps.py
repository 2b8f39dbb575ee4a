import importlib

from django.apps import AppConfig


class LtiConfig(AppConfig):
    """LTI 1.3 from an LMS: launches into courses, deep linking, grades back (AGS), rosters (NRPS), keys."""

    name = "lti"
    verbose_name = "LTI 1.3"

    def ready(self) -> None:
        # Receivers connect when imported, and only once every app is loaded.
        importlib.import_module("lti.receivers")
