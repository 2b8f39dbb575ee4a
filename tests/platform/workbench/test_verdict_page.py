"""The verdict page says what happened, in the reader's language."""

import re

import pytest
from django.conf import settings
from django.urls import reverse

from grader import contract

pytestmark = pytest.mark.django_db


def page_of(client, submission, language="en") -> str:
    client.force_login(submission.user)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    return client.get(reverse("submissions:detail", args=[submission.pk])).content.decode()


def test_a_partly_right_submission_is_headed_by_its_points_not_by_an_error_name(client, graded):
    page = page_of(client, graded("starter"))
    assert "2 of 15 points: 4 visible checks failed, 5 hidden checks failed." in page
    assert "0.13" not in page and "RUNTIME_ERROR" not in page.split('id="headline"')[1].split("</p>")[0]
    assert "Runs the article&#x27;s perceptron example" in page  # the check's title, not its id
    assert "runs_the_article_example</span>" not in page


def test_the_first_failing_visible_check_is_open_with_expected_against_got(client, graded):
    page = page_of(client, graded("starter"))
    details = re.findall(r'<li class="check (pass|fail)"[^>]*>\s*<details( open)?>', page)
    opened = [i for i, (_, is_open) in enumerate(details) if is_open]
    first_failure = next(i for i, (state, _) in enumerate(details) if state == "fail")
    assert opened == [first_failure]


def test_a_syntax_error_is_one_block_with_its_line(client, graded):
    page = page_of(client, graded("syntax_error"))
    assert "Your code has a syntax error on line 2, so no check could run." in page
    assert 'id="load-error"' in page and "expected &#x27;:&#x27;" in page
    assert "not run" not in page and 'class="check ' not in page


def test_a_load_error_is_one_block_with_its_line(client, graded):
    page = page_of(client, graded("load_error"))
    assert "Your code raised an error while loading (line 1), so no check could run." in page
    assert "ModuleNotFoundError" in page


def test_performance_is_a_chart_with_the_numbers_behind_a_disclosure(client, graded):
    page = page_of(client, graded("accepted"))
    assert "15 of 15 points: every check passed." in page
    assert 'class="perf-chart"' in page and "{&#x27;cases&#x27;" not in page
    assert "<summary>How it was measured</summary>" in page


def test_speed_is_said_in_words_with_no_raw_keys(client, graded):
    """Issue 28: "0.9219× (0.2516–1.323)", `speedup: None` and `budget_s` were what a student read."""
    page = page_of(client, graded("accepted"))  # ratio 0.9219, interval 0.2516–1.323, at most 3×
    assert "Your code was about as fast as the reference solution." not in page  # 0.92 is faster
    assert "Your code was about 1.1× faster than the reference solution." in page
    assert "95% interval: your time is 25% to 132% of its time." in page
    assert "Needed: at most 3× the time of the reference solution." in page
    assert "Timed runs of each" in page and "of 8 seconds allowed" in page
    for raw in ("speedup", "budget_s", "None", "0.9219", "student_compile_s"):
        assert raw not in page, raw


def test_a_speed_up_case_names_its_baseline(client, graded):
    submission = graded("accepted")
    case = submission.result["perf"]["cases"][0]
    case.update(baseline="loop", speedup=5, at_most=0.2, ratio=0.05, interval=[0.04, 0.06])
    submission.save(update_fields=["result"])
    page = page_of(client, submission)
    assert "Your code was about 20× faster than the plain loop." in page
    assert "Needed: at least 5× faster than the plain loop." in page
    assert "Time of the plain loop (median)" in page and "Reference time" not in page


def test_the_chinese_verdict_page_is_in_chinese(client, graded):
    page = page_of(client, graded("starter"), "zh-hans")
    assert "运行文章里的感知机例子" in page
    assert "15 分中得 2 分" in page


def test_a_result_stored_before_format_4_reads_as_written_without_guessing_lines(client, graded):
    submission = graded("syntax_error")
    for row in submission.result["checks"]:  # as the judge wrote it before rows carried their fields
        for field in ("title", "expected", "got", "line"):
            row.pop(field)
        row["message_params"].pop("error", None)
    submission.save()
    page = page_of(client, submission)
    assert "not run: your code has a syntax error" in page and "expected &#x27;:&#x27;" in page  # the judge's note
    assert "on line 2" not in page and 'id="error-lines"' not in page


def test_check_titles_come_from_the_row_then_the_version_never_from_checks_py(client, graded):
    submission = graded("starter")
    version = submission.exercise_version
    assert version.check_titles["runs_the_article_example"]["en"] == "Runs the article's perceptron example"
    version.files = {**version.files, "checks.py": "this is not python ("}  # never read at render time
    version.check_titles = {**version.check_titles, "names_a_missing_input": {"en": "Names the missing input"}}
    version.save()
    submission.result["checks"][0]["title"] = {"en": "The row's own title", "zh-hans": "行自带的标题"}
    submission.save()
    page = page_of(client, submission)
    assert "The row&#x27;s own title" in page and "Names the missing input" in page
    assert "行自带的标题" in page_of(client, submission, "zh-hans")


def test_each_timing_says_the_machine_it_came_from_its_load_and_clock(client, graded):
    accepted = graded("accepted")
    accepted.result["perf"]["host"] = {"cpu_model": "AMD EPYC 7B13", "cpus": 16, "arch": "x86_64",
                                       "sandbox": "docker (runsc)"}
    accepted.result["perf"]["host_load"] = {"runnable_mean": 3.5, "runnable_max": 9, "cpus": 16, "samples": 40,
                                            "busy": False}
    accepted.result["perf"]["cases"][0]["clock"] = "cpu"
    accepted.save()
    page = page_of(client, accepted)
    assert "Timed on" in page and "AMD EPYC 7B13, 16 CPUs (x86_64), in the docker (runsc) sandbox" in page
    assert "3.5 tasks wanting a CPU on average (at most 9) for 16 CPUs: not busy" in page
    assert "other load cannot inflate it" in page
    chinese = page_of(client, accepted, "zh-hans")
    assert "Timed on" not in chinese and "AMD EPYC 7B13" in chinese


def test_a_verdict_stored_before_the_machine_was_recorded_shows_no_machine(client, graded):
    page = page_of(client, graded("accepted"))
    assert "How it was measured" in page and "Timed on" not in page


def test_a_failed_hidden_check_says_only_that_it_failed_in_either_language(client, graded):
    # Recorded from the judge: a mutant that passes every visible check and fails one hidden one.
    submission = graded("hidden_failed")
    hidden = next(c for c in submission.result["checks"] if c["message_id"] == "hidden.failed")
    english = page_of(client, submission)
    row = english.split(f'data-name="{hidden["name"]}"')[1].split("</li>")[0]
    assert '<p class="message">a hidden check failed</p>' in row and "<dt>" not in row and "traceback" not in row
    chinese = page_of(client, submission, "zh-hans")
    assert '<p class="message">一项隐藏检查未通过</p>' in chinese.split(f'data-name="{hidden["name"]}"')[1]


def test_a_load_error_is_one_block_when_hidden_rows_say_only_that_they_failed(client, graded):
    # Since every failed hidden check is a wrong answer, a load error's hidden rows are too.
    submission = graded("load_error")
    submission.result["checks"] = [
        row if row["visible"] or row["name"] == "plan_once_run_many"
        else contract.hidden_failure(row["name"], row["max_points"]).to_dict()
        for row in submission.result["checks"]]
    submission.save()
    page = page_of(client, submission)
    assert "Your code raised an error while loading (line 1), so no check could run." in page
