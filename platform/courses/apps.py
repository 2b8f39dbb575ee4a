import importlib

from django.apps import AppConfig


class CoursesConfig(AppConfig):
    name = "courses"

    def ready(self) -> None:
        # Receivers connect when imported, and only once every app is loaded.
        importlib.import_module("courses.receivers")
