""""What does this print?" answers are proven in the real sandbox, and a wrong one is caught."""
import shutil
from pathlib import Path

import pytest

from grader.quizzes import load_content, validate_all

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.slow


@pytest.fixture
def sandbox(requires):
    from sandbox import SandboxUnavailable, get_sandbox

    try:
        return get_sandbox("local")
    except SandboxUnavailable as error:
        requires("bubblewrap sandbox", False, str(error))


def test_every_bank_and_template_validates_with_the_snippets_run(sandbox):
    problems = validate_all(ROOT / "exercises", sandbox)
    assert not any(problems.values()), {k: v for k, v in problems.items() if v}
    content = load_content(ROOT / "exercises")
    assert len(content.questions) >= 80
    assert len(content.templates) >= 2


def test_a_wrong_stored_output_is_reported_with_what_the_code_prints(sandbox, tmp_path):
    (tmp_path / "quizzes").mkdir()
    shutil.copy(ROOT / "exercises" / "quizzes" / "topics.toml", tmp_path / "quizzes")
    bank = (ROOT / "exercises" / "quizzes" / "autograd.toml").read_text(encoding="utf-8")
    assert 'answer = "False None"' in bank
    (tmp_path / "quizzes" / "autograd.toml").write_text(bank.replace('answer = "False None"', 'answer = "True None"'),
                                                       encoding="utf-8")
    problems = validate_all(tmp_path, sandbox)["quizzes/autograd.toml"]
    assert problems == [
        "quizzes/autograd.toml: question \"ag-no-grad-output\": the snippet prints 'False None', "
        "but the stored answer is 'True None'"
    ]
