import importlib

from django.apps import AppConfig


class CoursesConfig(AppConfig):
    """Courses, rosters and invitations, assignments, the gradebook and its regrades."""

    name = "courses"

    def ready(self) -> None:
        # Receivers connect when imported, and only once every app is loaded.
        importlib.import_module("courses.receivers")
