import importlib

from django.apps import AppConfig


class SimilarityConfig(AppConfig):
    """Fingerprints of graded code, similarity reports, holding a board entry for review."""

    name = "similarity"

    def ready(self) -> None:
        # Receivers connect when imported, and only once every app is loaded.
        importlib.import_module("similarity.receivers")
