"""Every message the judge can write reads in Chinese too; durations read as words."""

import re

import pytest
from django.utils import translation

from grader import contract
from workbench import messages


def ids_the_judge_emits() -> set[str]:
    return set(contract.MESSAGES)


def only_parameters(template: str) -> bool:
    return not re.sub(r"%\(\w+\)s", "", template).strip()


def test_every_message_id_of_the_judge_has_an_entry():
    missing = ids_the_judge_emits() - set(messages.CATALOGUE)
    assert not missing, f"add these judge message ids to workbench/messages.py CATALOGUE: {sorted(missing)}"
    unknown = set(messages.CATALOGUE) - ids_the_judge_emits()
    assert not unknown, f"CATALOGUE has ids the contract does not define: {sorted(unknown)}"


@pytest.mark.parametrize("message_id", sorted(contract.MESSAGES))
def test_every_entry_words_the_parameters_the_contract_names(message_id):
    named = set(re.findall(r"%\((\w+)\)s", messages.CATALOGUE.get(message_id, "")))
    assert named <= contract.message_parameters(message_id), (
        f"{message_id}: the catalogue fills {sorted(named)}, the contract carries "
        f"{sorted(contract.message_parameters(message_id))}")


@pytest.mark.parametrize("english", sorted(set(messages.CATALOGUE.values())))
def test_every_message_has_chinese(english):
    if only_parameters(english):
        return
    with translation.override("zh-hans"):
        chinese = translation.gettext(english)
    assert chinese != english, f"no Chinese for {english!r}: run makemessages and translate it in platform/locale"
    assert (
        re.findall(r"%\(\w+\)s", chinese)
        and sorted(re.findall(r"%\(\w+\)s", chinese)) == sorted(re.findall(r"%\(\w+\)s", english))
        or not re.findall(r"%\(\w+\)s", english)
    ), f"the Chinese for {english!r} lost or renamed a parameter"


def test_a_message_is_rendered_with_its_parameters_as_code_and_durations_in_words():
    with translation.override("en"):
        assert messages.render({"message_id": "stop.no_answer", "message_params": {"seconds": 90}}) == (
            "no answer within 2 minutes (time limit)"
        )
        assert messages.render({"message_id": "stop.killed", "message_params": {"signal": "<SIGKILL>"}}) == (
            "your program was killed by <code>&lt;SIGKILL&gt;</code>"
        )
    with translation.override("zh-hans"):
        assert messages.render({"message_id": "stop.no_answer", "message_params": {"seconds": 900}}) == (
            "在 15 分钟内没有回应（超出时间限制）"
        )
        too_few = {"n": 4, "budget": "8", "needed": 10, "at_most": "3", "baseline": "reference"}
        assert messages.render({"message_id": "perf.too_few_pairs", "message_params": too_few}) == (
            "太慢：8 秒的计时预算内只完成了 <code>4</code> 次计时调用，而作出判断需要 <code>10</code> 次；"
            "要求用时不超过参考解的 <code>3</code> 倍"
        )
        passed = {"ratio": "1.1", "low": "0.98", "high": "1.2", "n": 40, "at_most": "1.5", "baseline": "eager"}
        assert messages.render({"message_id": "perf.pass", "message_params": passed}) == (
            "速度达标：用时为<code>eager</code>的 <code>1.1</code> 倍（区间 <code>0.98</code>–<code>1.2</code>，"
            "n=<code>40</code>）；要求不超过 <code>1.5</code> 倍"
        )


def test_a_perf_row_stored_before_format_3_still_reads_in_chinese():
    old = {"n": 4, "budget": "8", "needed": 10, "threshold": "at most 3x the time of", "baseline": "reference"}
    with translation.override("zh-hans"):
        assert messages.render({"message_id": "perf.too_few_pairs", "message_params": old}) == (
            "太慢：8 秒的计时预算内只完成了 <code>4</code> 次计时调用，而作出判断需要 <code>10</code> 次"
        )
        old = {"measured": "1.1x the reference time", "threshold": "at most", "baseline": "reference"}
        assert messages.render({"message_id": "perf.pass", "message_params": old}) == "速度达标"


def test_code_in_a_checks_words_is_shown_as_code_and_everything_else_escaped():
    said = {"message_id": "check.failed",
            "message_params": {"detail": {"en": "`execute()` got <b>", "zh-hans": "`execute()` 得到 <b>"}}}
    with translation.override("zh-hans"):
        assert messages.render(said) == "<code>execute()</code> 得到 &lt;b&gt;"


def test_a_checks_own_words_and_value_names_read_in_the_readers_language():
    said = {"message_id": "check.failed", "message_params": {"detail": {"en": "got <3>", "zh-hans": "得到 <3>"}}}
    compared = {
        "message_id": "compare.difference",
        "message_params": {"what": {"en": "the output[0]", "zh-hans": "输出[0]"}, "expected": "2.5", "got": "2.0",
                           "difference": "0.5"},
    }
    with translation.override("zh-hans"):
        assert messages.render(said) == "得到 &lt;3&gt;"
        assert messages.render(compared) == (
            "输出[0]：期望 <code>2.5</code>，实际为 <code>2.0</code>（相差 <code>0.5</code>）")
    with translation.override("en"):
        assert messages.render(said) == "got &lt;3&gt;"
        assert messages.render(compared) == (
            "the output[0]: expected <code>2.5</code>, got <code>2.0</code> (difference <code>0.5</code>)")


def test_an_english_only_detail_stored_before_format_3_is_shown_as_written_never_parsed():
    row = {"message_id": "check.failed", "message_params": {"detail": "result['z']: expected 8, got 9"}}
    with translation.override("zh-hans"):
        assert messages.render(row) == "result[&#x27;z&#x27;]: expected 8, got 9"


def test_the_stop_that_kept_a_check_from_running_is_worded_from_its_own_id():
    stopped = {"message_id": "not_run.stopped", "message_params": {
        "reason": {"message_id": "stop.no_answer", "message_params": {"seconds": 90}}, "error": "..."}}
    with translation.override("en"):
        assert messages.render(stopped) == "not run: no answer within 2 minutes (time limit)"
    with translation.override("zh-hans"):
        assert "在 2 分钟内没有回应" in messages.render(stopped)
    old = {"message_id": "not_run.stopped", "message_params": {"reason": "no answer within 5 s <b>"}}
    with translation.override("zh-hans"):
        assert messages.render(old).endswith("no answer within 5 s &lt;b&gt;")  # format 3: its English as written


def test_a_row_without_an_id_shows_the_judges_english():
    assert messages.render({"message": "something <new>"}) == "something &lt;new&gt;"


@pytest.mark.parametrize(
    ("seconds", "english", "chinese"),
    [
        (0.0067, "6.7 ms", "6.7 毫秒"),
        (1, "1 second", "1 秒"),
        (3.5, "3.5 seconds", "3.5 秒"),
        (900, "15 minutes", "15 分钟"),
        (5400, "1 hour 30 minutes", "1 小时 30 分钟"),
    ],
)
def test_durations_read_as_words(seconds, english, chinese):
    with translation.override("en"):
        assert messages.duration(seconds) == english
    with translation.override("zh-hans"):
        assert messages.duration(seconds) == chinese
