import importlib

from django.apps import AppConfig


class LtiConfig(AppConfig):
    name = "lti"
    verbose_name = "LTI 1.3"

    def ready(self) -> None:
        # Receivers connect when imported, and only once every app is loaded.
        importlib.import_module("lti.receivers")
