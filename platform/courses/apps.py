from django.apps import AppConfig


class CoursesConfig(AppConfig):
    name = "courses"

    def ready(self) -> None:
        from courses import receivers  # noqa: F401  (connects the signal receivers)
