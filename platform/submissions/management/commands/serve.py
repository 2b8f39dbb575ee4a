"""`make run`: the web server and a grading worker in one command; Ctrl-C stops both."""
import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Serve the site on ADDRPORT with a Celery worker grading submissions."

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")

    def handle(self, *args, addrport: str, **options):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(settings.PLATFORM_DIR), os.environ.get("PYTHONPATH")]))}
        base = str(settings.BASE_DIR)
        worker = [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "cpu",
                  "--concurrency", "1", "--loglevel", "INFO", "--hostname", "graphdojo@%h"]
        web = [sys.executable, "manage.py", "runserver", addrport, "--noreload"]
        children = [subprocess.Popen(worker, cwd=base, env=env), subprocess.Popen(web, cwd=base, env=env)]
        self.stdout.write(self.style.SUCCESS(f"GraphDojo: http://{addrport}/  (Ctrl-C stops the site and the worker)"))
        stopping = False

        def stop(*_):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        try:
            while not stopping and all(child.poll() is None for child in children):
                time.sleep(0.5)
        finally:
            for child in children:
                if child.poll() is None:
                    child.terminate()
            deadline = time.monotonic() + 10
            for child in children:
                try:
                    child.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    child.kill()
        failed = [c.args[2] if c.args[1] == "-m" else c.args[1] for c in children if c.returncode not in (0, -signal.SIGTERM, -signal.SIGINT, None)]
        if failed and not stopping:
            raise SystemExit(f"stopped because a process exited: {', '.join(failed)}")
