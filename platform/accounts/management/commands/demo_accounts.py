from django.core.management.base import BaseCommand

from accounts.services import demo_accounts_ensure


class Command(BaseCommand):
    help = "Create the demo instructor and student accounts and print their credentials."

    def handle(self, *args, **options):
        for username, password, role in demo_accounts_ensure():
            self.stdout.write(f"  {role:<10} username: {username:<12} password: {password}")
