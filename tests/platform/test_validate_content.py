"""python manage.py validate_content: proves content in the sandbox; exit 1 on any failure."""
import json
import shutil

import pytest
from django.core.management import CommandError, call_command

from testbed.exercises import TOML, make_exercise
from tests.grader.factories import QUIZ_BANK_HEADER, grading_sandbox

WRONG = "def add(a, b):\n    return a - b\n"


@pytest.fixture
def docker(requires):
    grading_sandbox("docker-runc", requires)  # skips here, fails in CI, when Docker is missing


def content(tmp_path, verdict="WRONG_ANSWER"):
    root = tmp_path / "content"
    make_exercise(root / "coding" / "tiny-adder", toml=TOML + f'\n[mutants]\nsubtracts = "{verdict}"\n',
                  files={"mutants/subtracts.py": WRONG})
    return root


def run(*args):
    from io import StringIO

    out = StringIO()
    code = 0
    try:
        call_command("validate_content", *args, stdout=out, stderr=StringIO())
    except SystemExit as exit_:
        code = exit_.code
    return code, out.getvalue()


def test_sound_content_is_proven(tmp_path, docker, settings):
    settings.SANDBOX_RUNTIME = "runc"
    code, out = run("--content-dir", str(content(tmp_path)), "--backend", "docker", "--pool", "0")
    assert code == 0, out
    assert "ok    tiny-adder" in out and "mutant:subtracts: WRONG_ANSWER (expected WRONG_ANSWER" in out
    assert "1 exercise(s) proven, 0 failed, 0 skipped" in out


def test_a_wrong_declaration_fails_with_the_details_as_json(tmp_path, docker, settings):
    settings.SANDBOX_RUNTIME = "runc"
    folder = str(content(tmp_path, "RUNTIME_ERROR"))
    code, out = run("tiny-adder", "--json", "--content-dir", folder, "--backend", "docker", "--pool", "0")
    assert code == 1
    report = json.loads(out)
    assert report["ok"] is False and report["quizzes"] is None
    (exercise,) = report["exercises"]
    mutant = next(r for r in exercise["runs"] if r["program"] == "mutant:subtracts")
    assert (mutant["ok"], mutant["expected"], mutant["got"]) == (False, "RUNTIME_ERROR", "WRONG_ANSWER")


def test_an_invalid_folder_fails_without_a_sandbox_run(tmp_path, docker, settings):
    settings.SANDBOX_RUNTIME = "runc"
    root = content(tmp_path)
    (root / "coding" / "tiny-adder" / "statement.zh-hans.md").unlink()
    code, out = run("--content-dir", str(root), "--backend", "docker", "--pool", "0", "--no-quizzes")
    assert code == 1 and "statement.zh-hans.md: missing" in out


def test_an_unknown_slug_is_a_usage_error(tmp_path, docker):
    with pytest.raises(CommandError, match="no exercise folder nope"):
        folder = str(content(tmp_path))
        call_command("validate_content", "nope", "--content-dir", folder, "--backend", "docker", "--pool", "0")


def test_a_gpu_exercise_is_listed_as_skipped_with_its_reason(tmp_path, docker):
    root = content(tmp_path)
    toml = root / "coding" / "tiny-adder" / "exercise.toml"
    toml.write_text(toml.read_text().replace("points = 10", "points = 10\ngpu = true"))
    code, out = run("--content-dir", str(root), "--backend", "docker", "--pool", "0", "--gpu", "no", "--no-quizzes")
    assert code == 0 and "SKIP  tiny-adder: needs a GPU" in out


# One small bank, one sandbox run: the real banks are proven on Docker by CI's content check
# (tests/e2e/test_content_validates.py); here, that the command finds the banks of the
# content it is given and runs their snippets, a right stored output passing and a wrong
# one failing it.
QUESTION = """
[[question]]
id = "ID"
type = "code_output"
difficulty = "easy"
topic = "autograd"
frameworks = ["pytorch"]
text.en = "What does this print?"
text.zh-hans = "这段代码打印什么？"
code = '''
print(6 * 7)
'''
answer = "ANSWER"
explanation.en = "Six times seven."
explanation.zh-hans = "六乘以七。"
reference = "https://docs.python.org/3/library/functions.html#print"
"""
BANK = QUIZ_BANK_HEADER + QUESTION.replace("ID", "right-output").replace("ANSWER", "42") + QUESTION.replace(
    "ID", "wrong-output").replace("ANSWER", "41")


def test_the_quiz_banks_of_the_content_are_validated_with_their_snippets_run(tmp_path, docker):
    from django.conf import settings as django_settings

    root = content(tmp_path)
    (root / "quizzes").mkdir()
    shutil.copy(django_settings.CONTENT_DIR / "quizzes" / "topics.toml", root / "quizzes")
    (root / "quizzes" / "tiny.toml").write_text(BANK, encoding="utf-8")
    code, out = run("--content-dir", str(root), "--backend", "docker", "--pool", "0", "--no-lessons", "--json")
    report = json.loads(out)
    assert code == 1 and report["quizzes"]["quizzes/tiny.toml"] == [
        "quizzes/tiny.toml: question \"wrong-output\": the snippet prints '42', but the stored answer is '41'"
    ], report["quizzes"]
    assert all(exercise["ok"] for exercise in report["exercises"])  # the bank alone failed the content
