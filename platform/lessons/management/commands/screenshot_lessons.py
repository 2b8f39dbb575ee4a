"""python manage.py screenshot_lessons [--base-url URL] [--out DIR]: every lesson page, the
lessons index and the playground, at desktop and phone width, in English and Chinese.

The site must be running (``make run``); the demo student logs in. Files are named
``<page>-<language>-<width>.png``; look at every one before calling a page done.
"""
from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import sync_playwright

from accounts.services import demo_accounts_ensure
from grader.contract import LANGUAGES
from lessons.selectors import lessons_published

WIDTHS = {"desktop": 1280, "mobile": 390}
CHROMIUM = "/usr/bin/chromium"


class Command(BaseCommand):
    help = "Screenshot every lesson page at desktop and 390 px width, in English and Simplified Chinese."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("--base-url", default="http://127.0.0.1:8000", help="the running site")
        parser.add_argument("--out", type=Path, default=None, help="default: var/screens/lessons")
        parser.add_argument("--only", nargs="*", default=None, metavar="SLUG", help="just these lessons")

    def handle(self, *args, **options):
        os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's loop sits beside the ORM
        out = options["out"] or Path(settings.VAR_DIR) / "screens" / "lessons"
        out.mkdir(parents=True, exist_ok=True)
        base = options["base_url"].rstrip("/")
        username, password, _role = next(a for a in demo_accounts_ensure() if a[2] == "student")
        slugs = [lesson.slug for lesson in lessons_published()]
        if options["only"]:
            slugs = [slug for slug in slugs if slug in options["only"]]
        pages = [("index", "/lessons/"), ("playground", "/lessons/playground/")]
        pages += [(slug, f"/lessons/{slug}/") for slug in slugs]
        written = []
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
                for language in LANGUAGES:
                    for label, width in WIDTHS.items():
                        context = browser.new_context(viewport={"width": width, "height": 900})
                        page = context.new_page()
                        page.goto(f"{base}/login/")
                        page.fill("input[name=username]", username)
                        page.fill("input[name=password]", password)
                        page.click("button[type=submit]")
                        page.wait_for_load_state()
                        context.add_cookies([{"name": settings.LANGUAGE_COOKIE_NAME, "value": language, "url": base}])
                        for name, path in pages:
                            page.goto(base + path)
                            page.wait_for_load_state("networkidle")
                            target = out / f"{name}-{language}-{label}.png"
                            page.screenshot(path=str(target), full_page=True)
                            written.append(target)
                        context.close()
                browser.close()
        except PlaywrightError as error:
            raise CommandError(f"could not drive Chromium at {base}: {error}") from None
        for target in written:
            self.stdout.write(str(target))
        self.stdout.write(self.style.SUCCESS(f"{len(written)} screenshots in {out}"))
