"""Every lesson in a real Chromium: its page in English and Chinese, its first runnable block
run in the sandbox (queued by the web process, run by a real Celery worker), and its
visualisation stepped, checking what changed on the page; the playground likewise. Set
GRAPHDOJO_SCREENSHOTS=<dir> to keep screenshots of the playground at 1280 and 390 px."""
import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from grader.lessons import load_lessons
from lessons.services import lessons_sync
from quizzes.services import quiz_content_sync
from tests.sandbox.backends import backend_sandbox

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
LESSONS = load_lessons(ROOT / "exercises").lessons


@pytest.fixture
def signed_in(transactional_db, content_dir, settings, make_user, live_server, page):
    """Lessons and quiz banks loaded, and the browser signed in as a student (by session cookie:
    the login form has its own journey test). The web process has no sandbox, as in the compose
    stack where the web container has no Docker socket: runs must go through a worker."""
    from django.test import Client

    settings.SANDBOX_BACKEND = "docker"
    settings.SANDBOX_IMAGE = "graphdojo-sandbox:no-such-tag"
    settings.CONTENT_DIR = content_dir
    assert not quiz_content_sync(content_dir).errors
    assert not lessons_sync(content_dir).errors
    client = Client()
    client.force_login(make_user("ada"))
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}])


@pytest.fixture
def lessons(signed_in, requires, monkeypatch, request):
    """Signed in, with a real Celery worker that runs playground runs where grading runs: here,
    bubblewrap (the environment is read when the worker starts)."""
    backend_sandbox("local", requires)
    monkeypatch.setenv("SANDBOX_BACKEND", "local")
    return request.getfixturevalue("celery_worker_process")


def step_static_vs_dynamic(page: Page) -> None:
    viz = page.locator("#viz-static-vs-dynamic")
    static, eager = viz.locator("[data-engine=static]"), viz.locator("[data-engine=eager]")
    expect(static.locator(".graph-state")).to_have_text("No graph yet: press Step or Play.")
    for _ in range(2):
        viz.get_by_role("button", name="Step").click()
    viz.get_by_role("button", name="Step").focus()   # the keyboard works too
    page.keyboard.press("Enter")
    expect(viz.locator(".step-counter")).to_have_text("step 3 of 20")
    expect(static.locator("g.node.symbolic")).to_have_count(3)           # w, x, b: described, no value
    expect(static.locator("g.node.current")).to_have_attribute("data-node", "b")
    expect(eager.locator('g.node.computed[data-node="b"] .sub')).to_have_text("= -2")   # eager: value at once
    for _ in range(8):
        viz.get_by_role("button", name="Step").click()
    expect(static.locator(".graph-state")).to_contain_text("Compiled and frozen")
    expect(static.locator("g.node.removed")).to_have_count(1)            # CSE merged the two zeros
    viz.get_by_role("button", name="Play").click()
    expect(viz.locator(".step-counter")).to_have_text("step 12 of 20")
    viz.get_by_role("button", name="Pause").click()
    paused_at = viz.locator(".step-counter").inner_text()
    page.wait_for_timeout(1500)   # the player ticks every 0.9 s: paused, it must not move
    expect(viz.locator(".step-counter")).to_have_text(paused_at)
    while viz.get_by_role("button", name="Step").is_enabled():
        viz.get_by_role("button", name="Step").click()
    expect(viz.locator(".step-counter")).to_have_text("step 20 of 20")
    expect(static.locator('g.node.computed[data-node="pred"] .sub')).to_have_text("= 1")
    viz.get_by_role("button", name="Reset").click()
    expect(static.locator("g.node.computed")).to_have_count(0)
    viz.locator(".program-select").select_option(label="A data-dependent branch: x = 1")
    for _ in range(3):
        viz.get_by_role("button", name="Step").click()
    expect(eager.locator(".step-text")).to_have_text("y = sub(4.0, h) → 3, recorded on the tape")
    expect(static.locator('g.node[data-node="h-4"]')).to_have_count(1)  # both branches in the graph
    expect(static.locator('g.node[data-node="4-h"]')).to_have_count(1)


def step_compile_flow(page: Page) -> None:
    viz = page.locator("#viz-compile-flow")
    expect(viz.locator(".pass-title")).to_have_text("After pass 1 of 9: order (topological sort)")
    viz.get_by_role("button", name="Next pass").click()
    expect(viz.locator(".pass-title")).to_have_text("After pass 2 of 9: dead code")
    expect(viz.locator(".pass-diff")).to_contain_text("Removed: exp")
    expect(viz.locator(".flow-counts tr.selected td").first).to_have_text("dead code")
    viz.locator("textarea").fill('x = g.placeholder((4, 4), name="x")\ny = F.relu(x) * 2.0 + 1.0\noutputs = [y]\n')
    viz.get_by_role("button", name="Rerun the passes").click()
    expect(viz.locator(".run-state")).to_have_text("Compiled. Step through the passes above.", timeout=60_000)
    expect(viz.locator(".flow-counts tbody tr").last.locator("td").nth(2)).to_have_text("1")   # one fused kernel
    viz.locator("textarea").fill("outputs = [undefined_name]\n")
    viz.get_by_role("button", name="Rerun the passes").click()
    expect(viz.locator(".run-state")).to_contain_text("NameError (line 1)", timeout=60_000)


def step_radar_and_guide(page: Page) -> None:
    radar = page.locator("#viz-radar")
    expect(radar.locator(".radar-table tbody tr")).to_have_count(5)
    assert page.evaluate("() => !!Chart.getChart(document.querySelector('#viz-radar canvas'))")
    expect(radar.locator("#measured-where")).to_contain_text("make bench")
    guide = page.locator("#viz-selection-guide")
    guide.get_by_label("Finished: it goes to production").check()
    guide.get_by_label("Outside Python: mobile, browser, a C++ server").check()
    guide.get_by_label("Large matrix products and convolutions").check()
    guide.get_by_label("Fixed shapes, no branches on values").check()
    guide.get_by_role("button", name="Recommend").click()
    result = guide.locator(".recommendation")
    expect(result).to_have_attribute("data-choice", "export")
    expect(result.locator(".rec-reasons li")).to_have_count(3)
    expect(result.locator(".rec-pitfalls a").first).to_have_attribute("href", "/lessons/pitfalls-tracing/")


def answer_the_guide(guide, *answers: str, button: str = "Recommend") -> None:
    for answer in answers:
        guide.get_by_label(answer).check()
    guide.get_by_role("button", name=button).click()


def test_the_selection_guide_keeps_code_outside_python_on_export_and_shows_ties(signed_in, live_server, page):
    """No worker is needed: the guide runs in the page. 'Outside Python' rules out every option
    but an exported graph, even where the other answers score another one higher (compile 8,
    export 6 here); answers that score two options alike show both, not the first in the file."""
    page.goto(f"{live_server.url}/lessons/choosing/")
    guide = page.locator("#viz-selection-guide")
    result = guide.locator(".recommendation")
    answer_the_guide(guide, "Stable: we train it for long runs", "Outside Python: mobile, browser, a C++ server",
                     "Many small ops, or Python overhead", "Fixed shapes, no branches on values")
    expect(result).to_have_attribute("data-choice", "export")
    expect(result.locator(".rec-option")).to_have_count(1)
    expect(result.locator(".rec-tie")).to_be_hidden()
    answer_the_guide(guide, "Exploring: the architecture changes every day",
                     "Outside Python: mobile, browser, a C++ server",
                     "Large matrix products and convolutions", "Shapes vary, or code branches on tensor values")
    expect(result).to_have_attribute("data-choice", "export")   # eager scored 8 to export's 4
    answer_the_guide(guide, "Finished: it goes to production", "In Python, on our own machines",
                     "Large matrix products and convolutions", "Fixed shapes, no branches on values")
    expect(result).to_have_attribute("data-choice", "compile export")   # 5 and 5
    expect(result.locator(".rec-option")).to_have_count(2)
    expect(result.locator(".rec-option").nth(1).locator(".rec-title")).to_have_text(
        "A whole exported graph (torch.export, TF SavedModel)")
    expect(result.locator(".rec-tie")).to_contain_text("A tie: these options fit your answers equally well.")
    page.locator("select[name=language]").select_option("zh-hans")
    expect(page.locator("html")).to_have_attribute("lang", re.compile("^zh"))
    guide = page.locator("#viz-selection-guide")
    answer_the_guide(guide, "已完成：要上线", "在我们自己的机器上，用 Python 运行", "大矩阵乘和卷积",
                     "形状固定，不根据数值分支", button="给出建议")
    expect(guide.locator(".rec-tie")).to_contain_text("平局：这几个方案与你的回答同样契合。")
    expect(guide.locator(".rec-option")).to_have_count(2)


STEPPERS = {"static-vs-dynamic": step_static_vs_dynamic, "compile-flow": step_compile_flow,
            "radar": step_radar_and_guide}


@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.slug for lesson in LESSONS])
def test_lesson_page(lesson, lessons, live_server, page):
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{live_server.url}/lessons/{lesson.slug}/")
    expect(page.get_by_role("heading", level=1)).to_have_text(lesson.title["en"])
    runnable = [s for s in lesson.segments("en") if s.runnable]
    if runnable:
        block = page.locator("figure.runnable").first
        block.get_by_role("button", name="Run").click()
        output = block.locator(".run-output")
        expect(output).to_be_visible(timeout=60_000)   # queued, then run by the worker
        if runnable[0].output is not None:
            expect(output).to_have_text(runnable[0].output.rstrip("\n"))
        expect(block.locator(".run-state")).to_have_text(re.compile(r"^finished in \d+\.\d\d s$"))
    for name in [s.text for s in lesson.segments("en") if s.kind == "viz"]:
        if name in STEPPERS:
            STEPPERS[name](page)
    page.locator("select[name=language]").select_option("zh-hans")
    expect(page.get_by_role("heading", level=1)).to_have_text(lesson.title["zh-hans"])
    expect(page.get_by_role("heading", name="自我检测")).to_be_visible()
    assert not errors, errors


def test_the_playground_runs_through_a_worker_and_shows_output_errors_and_the_rate_limit(
    lessons, live_server, page, monkeypatch
):
    from lessons.models import PlaygroundRun

    monkeypatch.setattr("lessons.services.RUNS_PER_WINDOW", 3)
    page.goto(f"{live_server.url}/lessons/playground/")
    form = page.locator("#playground")
    form.get_by_role("button", name="Run").click()   # the example program, as the page offers it
    expect(form.locator(".run-bar")).to_have_attribute("data-state", "done", timeout=60_000)
    expect(form.locator(".run-output")).to_have_text("y = 15.0  dy/dx = 8.0")
    expect(form.locator(".run-state")).to_have_text(re.compile(r"^finished in \d+\.\d\d s$"))
    form.locator("textarea").fill("import os\nprint('hello from uid', os.getuid())\nraise SystemExit(3)\n")
    form.get_by_role("button", name="Run").click()
    expect(form.locator(".run-output")).to_have_text(re.compile(r"^hello from uid [1-9]\d*\s*$"), timeout=60_000)
    expect(form.locator(".run-state")).to_have_text(re.compile(r"^exited with 3 in \d+\.\d\d s$"))
    form.get_by_role("button", name="Run").click()
    expect(form.locator(".run-bar")).to_have_attribute("data-state", "done", timeout=60_000)
    form.get_by_role("button", name="Run").click()
    expect(form.locator(".run-output")).to_contain_text("You have used your runs for now. Try again in")
    assert list(PlaygroundRun.objects.values_list("state", flat=True)) == ["done"] * 3


@pytest.mark.parametrize(("language", "waiting"), [
    ("en", "Queued: waiting for a free sandbox…"), ("zh-hans", "排队中：等待空闲的沙箱…"),
])
def test_a_run_no_worker_has_taken_says_it_is_queued(signed_in, live_server, page, language, waiting):
    """No worker runs here: the web process queues the run and the page says so (and never runs
    it itself: it has no sandbox)."""
    page.goto(f"{live_server.url}/lessons/playground/")
    if language != "en":
        page.locator("select[name=language]").select_option(language)
        expect(page.locator("html")).to_have_attribute("lang", re.compile("^zh"))
    form = page.locator("#playground")
    form.locator("button[type=submit]").click()
    expect(form.locator(".run-bar")).to_have_attribute("data-state", "queued")
    expect(form.locator(".run-state")).to_have_text(waiting)
    expect(form.locator(".run-output")).to_be_hidden()
    expect(form.locator("button[type=submit]")).to_be_disabled()


def test_the_playground_after_a_run_fits_a_phone_in_both_languages(lessons, live_server, page, tmp_path):
    """The playground after a run, at 1280 and 390 px, in English and Chinese: nothing scrolls
    sideways. Set GRAPHDOJO_SCREENSHOTS=<dir> to keep the screenshots."""
    shots = os.environ.get("GRAPHDOJO_SCREENSHOTS") or str(tmp_path)
    for language in ("en", "zh-hans"):
        for width, height in ((1280, 900), (390, 844)):
            page.set_viewport_size({"width": width, "height": height})
            page.goto(f"{live_server.url}/lessons/playground/")
            if language != "en":
                page.locator("select[name=language]").select_option(language)
                expect(page.locator("html")).to_have_attribute("lang", re.compile("^zh"))
            form = page.locator("#playground")
            form.locator("button[type=submit]").click()
            expect(form.locator(".run-bar")).to_have_attribute("data-state", "done", timeout=60_000)
            overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert overflow <= 0, f"{language} at {width} px scrolls sideways by {overflow} px"
            page.screenshot(path=f"{shots}/playground-{width}-{language}.png", full_page=True)
