from django.apps import AppConfig


class OperationsConfig(AppConfig):
    """What operators need: health, metrics, the grading dashboard, the bad-request page."""

    name = "operations"
