import importlib

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AccountsConfig(AppConfig):
    """Users and roles, sign-up, profiles, passwords and the demo accounts."""

    name = "accounts"

    def ready(self) -> None:
        # Imported once every app is loaded (services import the models).
        services = importlib.import_module("accounts.services")
        post_migrate.connect(services.instructors_group_refresh, dispatch_uid="accounts.instructors_group_refresh")
