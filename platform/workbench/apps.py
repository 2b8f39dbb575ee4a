from django.apps import AppConfig


class WorkbenchConfig(AppConfig):
    """The student's exercise page: the exercise list, the code form, drafts, practice runs of the
    visible checks, readable verdicts."""

    name = "workbench"
