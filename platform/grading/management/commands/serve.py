"""`make run`: the web server and a grading worker (with the sweep's beat) in one command; Ctrl-C stops both."""
import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Serve the site on ADDRPORT with a Celery worker grading submissions."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")

    def handle(self, *args: object, addrport: str, **options: object) -> None:
        path = os.pathsep.join(filter(None, [str(settings.PLATFORM_DIR), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "PYTHONPATH": path}
        base = str(settings.BASE_DIR)
        worker = [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "cpu",
                  "--concurrency", "1", "--loglevel", "INFO", "--hostname", "graphdojo@%h",
                  # beat inside the worker: the sweep that re-sends lost gradings runs here too
                  "--beat", "--schedule", settings.CELERY_BEAT_SCHEDULE_FILENAME]
        web = [sys.executable, "manage.py", "runserver", addrport, "--noreload"]
        children = {
            "grading worker": subprocess.Popen(worker, cwd=base, env=env),
            "web server": subprocess.Popen(web, cwd=base, env=env),
        }
        self.stdout.write(self.style.SUCCESS(f"GraphDojo: http://{addrport}/  (Ctrl-C stops the site and the worker)"))
        stopping = False

        def stop(*_: object) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        exited: list[str] = []
        try:
            while not stopping and not exited:
                time.sleep(0.5)
                exited = [name for name, child in children.items() if child.poll() is not None]
        finally:
            for child in children.values():
                if child.poll() is None:
                    child.terminate()
            deadline = time.monotonic() + 10
            for child in children.values():
                try:
                    child.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    child.kill()
        if exited and not stopping:
            raise SystemExit(f"stopped because the {' and the '.join(exited)} exited")
