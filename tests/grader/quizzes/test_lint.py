"""The bank lint: answers must not be guessable from the shape of the choices."""
from pathlib import Path

from grader.quizzes import load_bank, load_content, load_topics
from grader.quizzes.lint import bank_numbers, lint_bank

ROOT = Path(__file__).resolve().parents[3]
TOPICS = load_topics(ROOT / "exercises" / "quizzes" / "topics.toml")
HEADER = '''
[bank]
id = "tiny"
title.en = "Tiny"
title.zh-hans = "小题库"
description.en = "A bank for tests."
description.zh-hans = "测试用题库。"
'''


def single(qid: str, choices: list[str], answer: str = "a", extra: str = "") -> str:
    rows = ", ".join(f'{{ id = "{chr(97 + i)}", en = "{text}", zh-hans = "{text}甲" }}'
                     for i, text in enumerate(choices))
    return f'''
[[question]]
id = "{qid}"
type = "single"
difficulty = "easy"
topic = "autograd"
frameworks = ["pytorch"]
text.en = "Pick one."
text.zh-hans = "选一个。"
choices = [ {rows} ]
answer = "{answer}"
explanation.en = "Because."
explanation.zh-hans = "因为如此。"
reference = "https://docs.pytorch.org/docs/stable/notes/autograd.html"
{extra}
'''


def true_false(qid: str, answer: bool) -> str:
    return f'''
[[question]]
id = "{qid}"
type = "true_false"
difficulty = "easy"
topic = "autograd"
frameworks = ["pytorch"]
text.en = "Is it so?"
text.zh-hans = "是这样吗？"
answer = {str(answer).lower()}
explanation.en = "Because."
explanation.zh-hans = "因为如此。"
reference = "https://docs.pytorch.org/docs/stable/notes/autograd.html"
'''


def bank(tmp_path: Path, body: str):
    path = tmp_path / "tiny.toml"
    path.write_text(HEADER + body, encoding="utf-8")
    return load_bank(path, TOPICS, "quizzes/tiny.toml")


def test_a_bank_whose_right_choice_is_always_the_longest_fails(tmp_path):
    body = "".join(single(f"q-{i}", ["the right one, longer", "wrong one", "wrong two"]) for i in range(3))
    problems = lint_bank(bank(tmp_path, body))
    assert any("the right choice is the longest (en) in 3 of 3" in p and "q-0, q-1, q-2" in p for p in problems)
    assert bank_numbers(bank(tmp_path, body)).longest_right == {"en": 3, "zh-hans": 3}


def test_the_longest_right_in_a_third_of_the_questions_passes(tmp_path):
    body = (single("q-0", ["right one, longer", "wrong one", "wrong two"])
            + single("q-1", ["right", "wrong one, long", "wrong two"])
            + single("q-2", ["right one", "a wrong one", "wrong two"]))
    assert lint_bank(bank(tmp_path, body)) == []


def test_a_choice_twice_the_median_is_an_outlier_unless_waived_with_a_reason(tmp_path):
    choices = ["right", "short", "a much much longer wrong", "wrong"]
    problems = lint_bank(bank(tmp_path, single("q-0", choices, answer="a")))
    assert any('question "q-0": choice \'c\' (en) is 24 characters long, the median choice 5' in p for p in problems)
    waived = single("q-0", choices, extra='waive = { choice_length = "the option names a real API" }')
    assert lint_bank(bank(tmp_path, waived)) == []
    empty = single("q-0", choices, extra='waive = { choice_length = " " }')
    assert any("waive.choice_length needs a reason" in p for p in lint_bank(bank(tmp_path, empty)))
    unknown = single("q-0", ["right", "wrong", "other"], extra='waive = { true_share = "no" }')
    assert any("only choice_length can be waived" in p for p in lint_bank(bank(tmp_path, unknown)))


def test_true_false_answers_must_be_balanced(tmp_path):
    assert any("100% of its 2 true/false answers are true" in p
               for p in lint_bank(bank(tmp_path, true_false("t-1", True) + true_false("t-2", True))))
    assert lint_bank(bank(tmp_path, true_false("t-1", True) + true_false("t-2", False))) == []


def test_a_single_answer_question_needs_three_choices(tmp_path):
    problems = lint_bank(bank(tmp_path, single("q-0", ["right", "wrong"])))
    assert any('question "q-0": offers 2 choices' in p for p in problems)


def test_the_shipped_banks_pass_the_lint():
    content = load_content(ROOT / "exercises")
    assert content.banks
    problems = [p for b in content.banks for p in lint_bank(b)]
    assert problems == [], "\n".join(problems)
