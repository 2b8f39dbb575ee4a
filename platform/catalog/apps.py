from django.apps import AppConfig


class CatalogConfig(AppConfig):
    """Exercises mirrored from exercises/ and their versions."""

    name = "catalog"
