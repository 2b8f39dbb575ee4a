""""What does this print?" answers are proven in the real sandbox, and a wrong one is caught.

Every real bank's snippets are proven by CI's content check on Docker
(tests/e2e/test_content_validates.py), with the Python, numpy and torch the local backend
runs too (tests/grader/test_exercises.py keeps them equal); here, the proof on local.
"""
import shutil
from pathlib import Path

import pytest

from grader.quizzes import validate_all

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.slow


@pytest.fixture
def sandbox(requires):
    from sandbox import SandboxUnavailable, get_sandbox

    try:
        return get_sandbox("local")
    except SandboxUnavailable as error:
        requires("bubblewrap sandbox", False, str(error))


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
