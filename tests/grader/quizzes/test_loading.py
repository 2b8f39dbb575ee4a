"""Loading banks and templates: a broken file names itself and the question at fault."""
import shutil
from pathlib import Path

import pytest

from grader.quizzes import ContentError, load_bank, load_content, load_topics, plan_interview, validate_all
from tests.grader.factories import QUIZ_BANK_HEADER

ROOT = Path(__file__).resolve().parents[3]
TOPICS = ROOT / "exercises" / "quizzes" / "topics.toml"

CHOICES = ('choices = [ { id = "a", en = "A", zh-hans = "甲" }, { id = "b", en = "B", zh-hans = "乙" }, '
           '{ id = "c", en = "C", zh-hans = "丙" } ]\n')
GOOD_QUESTION = '''
[[question]]
id = "q-one"
type = "single"
difficulty = "easy"
topic = "autograd"
frameworks = ["pytorch"]
text.en = "Pick b."
text.zh-hans = "选 b。"
''' + CHOICES + '''answer = "b"
explanation.en = "Because."
explanation.zh-hans = "因为如此。"
reference = "https://docs.pytorch.org/docs/stable/notes/autograd.html"
'''


@pytest.fixture
def topics():
    return load_topics(TOPICS)


def write(tmp_path: Path, text: str, name: str = "tiny.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_valid_bank_loads(tmp_path, topics):
    bank = load_bank(write(tmp_path, QUIZ_BANK_HEADER + GOOD_QUESTION), topics)
    assert bank.id == "tiny" and [q.id for q in bank.questions] == ["q-one"]
    assert bank.questions[0].text["zh-hans"] == "选 b。"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('answer = "b"', 'answer = "z"'), 'tiny.toml: question "q-one": answer must be one of the choice ids'),
        (('text.zh-hans = "选 b。"', 'text.zh-hans = "Pick b."'), 'question "q-one": text.zh-hans has no Chinese'),
        (('text.zh-hans = "选 b。"\n', ''), 'question "q-one": text.zh-hans is missing'),
        (('topic = "autograd"', 'topic = "cooking"'), "topic 'cooking' is not in topics.toml"),
        (('difficulty = "easy"', 'difficulty = "trivial"'), "difficulty must be one of easy, medium, hard"),
        (('reference = "https://', 'reference = "http://'), "reference must be the https:// address"),
        (('type = "single"', 'type = "essay"'), "type must be one of"),
        (('answer = "b"', 'answer = "b"\ncolour = "red"'), "unknown key 'colour'"),
        (('answer = "b"', 'answer = "b"\ntolerance = 0.1'), "tolerance belongs to numeric questions only"),
    ],
    ids=["bad-answer", "english-zh", "missing-zh", "unknown-topic", "bad-difficulty", "http", "bad-type",
         "unknown-key", "stray-tolerance"],
)
def test_a_malformed_question_is_named_with_its_file(tmp_path, topics, change, message):
    old, new = change
    assert old in GOOD_QUESTION
    path = write(tmp_path, QUIZ_BANK_HEADER + GOOD_QUESTION.replace(old, new))
    with pytest.raises(ContentError) as error:
        load_bank(path, topics)
    assert any(message in problem for problem in error.value.problems), error.value.problems
    assert all(problem.startswith("tiny.toml") for problem in error.value.problems)


def test_broken_toml_names_the_file_and_line(tmp_path, topics):
    with pytest.raises(ContentError, match=r"tiny.toml: not valid TOML: .*line"):
        load_bank(write(tmp_path, QUIZ_BANK_HEADER + "[[question]\n"), topics)


def test_parameters_must_be_declared_and_the_answer_computable(tmp_path, topics):
    question = (
        GOOD_QUESTION.replace('type = "single"', 'type = "numeric"')
        .replace(CHOICES, "")
        .replace('answer = "b"', 'params = { n = { range = [0, 3] } }\nanswer_expr = "10 / n"')
        .replace('text.en = "Pick b."', 'text.en = "Divide by ${n} and ${m}."')
    )
    with pytest.raises(ContentError) as error:
        load_bank(write(tmp_path, QUIZ_BANK_HEADER + question), topics)
    problems = "\n".join(error.value.problems)
    assert "text.en: ${m} is not a declared parameter" in problems
    assert "answer_expr fails for {'n': 0}: ZeroDivisionError" in problems


def test_a_short_text_pattern_that_accepts_a_rejected_answer_is_caught(tmp_path, topics):
    question = (
        GOOD_QUESTION.replace('type = "single"', 'type = "short_text"')
        .replace(CHOICES, "")
        .replace('answer = "b"', "answer = \"detach\"\npatterns = ['^d.*']\nreject = [\"data\"]")
    )
    with pytest.raises(ContentError, match="'data' is listed under reject, yet it is accepted"):
        load_bank(write(tmp_path, QUIZ_BANK_HEADER + question), topics)


def test_question_ids_are_unique_across_banks(tmp_path):
    (tmp_path / "quizzes").mkdir()
    shutil.copy(TOPICS, tmp_path / "quizzes" / "topics.toml")
    write(tmp_path / "quizzes", QUIZ_BANK_HEADER + GOOD_QUESTION, "one.toml")
    write(tmp_path / "quizzes", QUIZ_BANK_HEADER.replace('id = "tiny"', 'id = "other"') + GOOD_QUESTION, "two.toml")
    problems = validate_all(tmp_path, sandbox=None)
    assert problems["quizzes/one.toml"] == []
    assert problems["quizzes/two.toml"] == [
        'quizzes/two.toml: question "q-one": the id is also used in quizzes/one.toml'
    ]


TEMPLATE = '''
id = "screen"
title.en = "Screen"
title.zh-hans = "筛选面试"
description.en = "A short screen."
description.zh-hans = "一次简短的面试。"
duration_s = 600

[[section]]
id = "concepts"
title.en = "Concepts"
title.zh-hans = "概念"
time_limit_s = 300
questions = ["q-one"]
draw = [ { count = 1, topic = "autograd" } ]
'''


def test_an_interview_template_must_fit_its_duration_and_its_draws(tmp_path):
    (tmp_path / "quizzes").mkdir()
    (tmp_path / "interviews").mkdir()
    shutil.copy(TOPICS, tmp_path / "quizzes" / "topics.toml")
    write(tmp_path / "quizzes", QUIZ_BANK_HEADER + GOOD_QUESTION, "one.toml")
    write(tmp_path / "interviews", TEMPLATE.replace("duration_s = 600", "duration_s = 100"), "screen.toml")
    problems = validate_all(tmp_path, sandbox=None)["interviews/screen.toml"]
    assert "interviews/screen.toml: the sections last 300 s together, longer than duration_s = 100" in problems
    assert any('section "concepts": a draw asks for 1 questions but only 0 match' in p for p in problems)


def test_interview_plans_are_fixed_by_the_seed(tmp_path):
    (tmp_path / "quizzes").mkdir()
    (tmp_path / "interviews").mkdir()
    shutil.copy(TOPICS, tmp_path / "quizzes" / "topics.toml")
    extra = "".join(GOOD_QUESTION.replace('"q-one"', f'"q-{n}"') for n in range(2, 9))
    write(tmp_path / "quizzes", QUIZ_BANK_HEADER + GOOD_QUESTION + extra, "one.toml")
    write(tmp_path / "interviews", TEMPLATE, "screen.toml")
    content = load_content(tmp_path)
    assert not any(content.problems.values()), content.problems
    template = content.templates[0]
    plans = {seed: plan_interview(template, content.questions, seed) for seed in range(12)}
    assert plan_interview(template, content.questions, 3) == plans[3]
    assert all(p[0].ref == "q-one" and len(p) == 2 and p[1].ref != "q-one" for p in plans.values())
    assert len({p[1].ref for p in plans.values()}) > 1  # different seeds draw different questions


def test_the_real_banks_and_templates_validate_without_the_sandbox():
    problems = validate_all(ROOT / "exercises", sandbox=None)
    assert problems and not any(problems.values()), {k: v for k, v in problems.items() if v}
    content = load_content(ROOT / "exercises")
    assert len(content.questions) >= 80
    assert len(content.templates) >= 2
