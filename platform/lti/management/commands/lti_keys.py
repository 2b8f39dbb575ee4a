from django.core.management.base import BaseCommand

from lti.services import keys_rotate


class Command(BaseCommand):
    help = "Create a new LTI signing key; the JWKS keeps the previous one and drops older ones."

    def handle(self, *args: object, **options: object) -> None:
        key, retired = keys_rotate()
        self.stdout.write(f"New signing key {key}; {retired} older key(s) left the JWKS.")
