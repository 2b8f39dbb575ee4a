from django.apps import AppConfig


class WorkbenchConfig(AppConfig):
    """The student's workbench: drafts, practice runs of the visible checks, readable verdicts."""

    name = "workbench"
