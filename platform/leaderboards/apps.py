import importlib

from django.apps import AppConfig


class LeaderboardsConfig(AppConfig):
    """Site and course boards: ranks, pseudonyms, the top measured again together."""

    name = "leaderboards"

    def ready(self) -> None:
        # Receivers connect when imported, and only once every app is loaded.
        importlib.import_module("leaderboards.receivers")
