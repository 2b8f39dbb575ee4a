"""The content lint refuses a checks.py that says anything to the student in English only."""
from __future__ import annotations

from pathlib import Path

import pytest

from grader.host.check_text import untranslated
from grader.host.spec import SpecError, load_exercise
from testbed.exercises import CHECKS, make_exercise
from tests.grader.factories import REPO

EXERCISES = sorted((REPO / "exercises" / "coding").glob("*/checks.py"))


@pytest.mark.parametrize("checks", EXERCISES, ids=lambda path: path.parent.name)
def test_every_exercise_says_everything_in_both_languages(checks: Path):
    assert untranslated(checks.read_text()) == []


def test_the_model_forms_pass():
    assert untranslated('''
from grader.harness import as_code, close, equal, fail, localize, raises
def compare(got, want, what, n):
    close(got, want, what=localize({"en": "{what}: the output", "zh-hans": "{what}：输出"}, what=what))
    equal(got, want, what={"en": "execute({'w': 2})", "zh-hans": "execute({'w': 2})"})
    equal(got, want, what=as_code(f"plan({n})"))
    with raises("cycle", what=what):
        pass
    fail({"en": "expected {n} kernels, got {k!r:.20}", "zh-hans": "应有 {n} 个内核，实际为 {k!r:.20} 个"}, n=n, k=got)
''') == []


@pytest.mark.parametrize("line, complaint", [
    ('fail("expected 3 kernels")', "fail(): the text must be a literal dict"),
    ('fail(f"expected {n} kernels")', "fail(): the text must be a literal dict"),
    ('fail({"en": "expected 3 kernels"})', "fail(): the text {'en': 'expected 3 kernels'} has no zh-hans"),
    ('fail({"en": "expected {n}", "zh-hans": "应有 {count}"}, n=1, count=1)', "the same placeholders"),
    ('fail({"en": "expected {n}", "zh-hans": "应有 {n}"})', "the text fills {n}, but no n=... is given"),
    ('fail({"en": "a {", "zh-hans": "a"})', "not a valid template"),
    ('close(1, 2, what="the output")', "close(what=...): a string is English only"),
    ('equal(1, 2, what=f"{what}: the output")', "equal(what=...): a string is English only"),
    ('equal(1, 2, what="the " + what)', "equal(what=...): a string is English only"),
    ('equal(1, 2, what={"en": "the output"})', "has no zh-hans"),
    ('localize({"en": "{x}"}, x=1)', "localize(): the text {'en': '{x}'} has no zh-hans"),
    ('raise CheckFailed("wrong")', "raise no CheckFailed"),
    ('fail({"en": "`run() failed", "zh-hans": "`run()` 失败"})',
     "the en text '`run() failed' has an unpaired backtick"),
    ('equal(1, 2, what={"en": "`f(x)`", "zh-hans": "`f(x)"})', "the zh-hans text '`f(x)' has an unpaired backtick"),
])
def test_english_only_text_is_refused_with_its_line(line, complaint):
    source = f"from grader.harness import *\n\ndef c(student, reference, rng, what='', n=1):\n    {line}\n"
    problems = untranslated(source)
    assert len(problems) == 1 and problems[0].startswith("line 4: ") and complaint in problems[0], problems


def test_validate_content_refuses_an_exercise_whose_checks_speak_english_only(tmp_path):
    checks = CHECKS.replace("close(student.add(2, 3), reference.add(2, 3))",
                            'close(student.add(2, 3), reference.add(2, 3), what="add(2, 3)")')
    with pytest.raises(SpecError) as caught:
        load_exercise(make_exercise(tmp_path / "ex", checks=checks))
    message = str(caught.value)
    assert "checks.py: every text a check shows the student needs English and Chinese" in message
    assert 'line 5: close(what=...): a string is English only' in message
