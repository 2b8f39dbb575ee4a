from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    """The pages a student practises on: exercises, the code form, a submission's verdict."""

    name = "submissions"
