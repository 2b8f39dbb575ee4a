"""A submission measuring again and a decided one, and the board, at desktop width and at 390 px,
in English and in Chinese: the page says what is happening in the reader's language, the
verdict page and the board print the same number for the same grading, and nothing is wider
than the phone. Set GRAPHDOJO_SCREENSHOTS=<dir> to keep a screenshot of each."""

import os
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import Browser

from grading.models import Submission
from tests.platform import classroom as make

pytestmark = [pytest.mark.browser, pytest.mark.slow]
WIDTHS = {"desktop": 1280, "phone": 390}
LOCALES = {"en": "en-US", "zh": "zh-CN"}
MEASURING = {"en": "Measuring again: the machine was busy", "zh": "重新测量：机器繁忙"}
SPEED_CHECK = {"name": "plans_once_runs_many", "passed": True, "visible": True, "points": 2.0, "max_points": 2.0,
               "message": "fast enough", "message_id": "", "message_params": {}, "kind": None}


@pytest.fixture
def gradings(transactional_db):
    ex = make.exercise("graph-ex")
    student = make.user("runner", pseudonym="runner")
    for i in range(4):
        make.graded(make.user(pseudonym=f"rival{i}"), ex, ratio=0.7 + i / 5)
    decided = make.graded(student, ex, ratio=0.98412, interval=(0.84611, 1.10432), checks=[SPEED_CHECK])
    # The case as the judge reports it, with the numbers its chart draws (the board's are stored already).
    case = {**decided.result["perf"]["cases"][0], "name": SPEED_CHECK["name"], "at_most": 1.5, "n": 20,
            "student_median_s": 0.0061, "baseline_median_s": 0.0062, "clock": "cpu"}
    Submission.objects.filter(pk=decided.pk).update(result={**decided.result, "perf": {"cases": [case]}})
    measuring = Submission.objects.create(user=student, exercise_version=ex.current_version, code="x = 1\n",
                                          status=Submission.Status.MEASURING, measure_again_at=timezone.now())
    return ex, decided, measuring


def test_measuring_again_and_a_decided_speed_read_well_in_both_languages(live_server, chromium: Browser, gradings):
    ex, decided, measuring = gradings
    shots = os.environ.get("GRAPHDOJO_SCREENSHOTS")
    pages = {"measuring": f"/submissions/{measuring.pk}/", "decided": f"/submissions/{decided.pk}/",
             "board": f"/boards/exercises/{ex.slug}/"}
    for language, locale in LOCALES.items():
        context = chromium.new_context(locale=locale)
        page = context.new_page()
        page.goto(f"{live_server.url}/login/")
        page.locator("input[name=username]").fill("runner")
        page.locator("input[name=password]").fill("a-long-password-1")
        page.locator("form button[type=submit]").last.click()
        page.wait_for_url(f"{live_server.url}/")
        for name, path in pages.items():
            for width_name, width in WIDTHS.items():
                page.set_viewport_size({"width": width, "height": 900})
                response = page.goto(live_server.url + path)
                assert response.status == 200, (name, response.status)
                text = page.locator("main").inner_text()
                if name == "measuring":
                    assert MEASURING[language] in text and page.locator("#measuring-again").is_visible()
                elif name == "decided":
                    assert page.locator("#board-speed strong").inner_text() == "0.98× (0.85–1.1)"
                    assert "0.98× (0.85–1.1)" in page.locator("figure.perf dl").first.inner_text()
                else:
                    mine = page.locator("#board tr.you").inner_text()
                    assert "0.98×" in mine and "(0.85–1.1)" in mine, mine
                if shots:
                    Path(shots).mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=f"{shots}/{name}-{width_name}-{language}.png", full_page=True)
                overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                assert overflow <= 1, f"{name} at {width}px in {language} is {overflow}px too wide"
        context.close()
