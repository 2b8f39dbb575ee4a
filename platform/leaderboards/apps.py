from django.apps import AppConfig


class LeaderboardsConfig(AppConfig):
    name = "leaderboards"

    def ready(self) -> None:
        from leaderboards import receivers  # noqa: F401  (connects the signal receivers)
