"""The bank lint: answers must not be guessable from the shape of the choices."""
from pathlib import Path

from grader.quizzes import load_bank, load_content, load_topics
from grader.quizzes.lint import bank_numbers, lint_across, lint_bank
from tests.grader.factories import QUIZ_BANK_HEADER

ROOT = Path(__file__).resolve().parents[3]
TOPICS = load_topics(ROOT / "exercises" / "quizzes" / "topics.toml")


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
    path.write_text(QUIZ_BANK_HEADER + body, encoding="utf-8")
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


def statement(qid: str, answer: bool, en: str, zh: str) -> str:
    return true_false(qid, answer).replace('"Is it so?"', f'"{en}"').replace('"是这样吗？"', f'"{zh}"')


def numeric(qid: str, text: str, answer_expr: str, params: str = "") -> str:
    return f'''
[[question]]
id = "{qid}"
type = "numeric"
difficulty = "easy"
topic = "autograd"
frameworks = ["pytorch"]
text.en = "{text}"
text.zh-hans = "{text}（中文）"
{params}
answer_expr = "{answer_expr}"
tolerance = 0
explanation.en = "Because."
explanation.zh-hans = "因为如此。"
reference = "https://docs.pytorch.org/docs/stable/notes/autograd.html"
'''


def test_absolute_words_must_not_lean_to_false(tmp_path):
    body = (statement("t-1", False, "It never recompiles.", "它从不重新编译。")
            + statement("t-2", False, "It always costs nothing.", "它总是没有任何代价。")
            + statement("t-3", True, "It recompiles on a new dtype.", "新的数据类型会让它重新编译。")
            + statement("t-4", True, "It traces on the first call.", "它在第一次调用时追踪。"))
    problems = lint_bank(bank(tmp_path, body))
    assert any("absolute word (en) are 0 true and 2 false" in p for p in problems), problems
    assert any("absolute word (zh-hans) are 0 true and 2 false" in p for p in problems), problems
    numbers = bank_numbers(bank(tmp_path, body))
    assert numbers.absolute_true_false == {"en": (0, 2), "zh-hans": (0, 2)}
    balanced = body.replace('"It recompiles on a new dtype."', '"It only recompiles on a new dtype."').replace(
        '"新的数据类型会让它重新编译。"', '"只有新的数据类型会让它重新编译。"')
    assert lint_bank(bank(tmp_path, balanced)) == []


def test_absolute_words_are_also_balanced_across_banks(tmp_path):
    one = bank(tmp_path, statement("t-1", False, "It never stops.", "它从不停止。")
               + statement("t-2", True, "It stops.", "它会停止。"))
    (tmp_path / "other").mkdir()
    other = bank(tmp_path / "other", statement("t-3", False, "It always runs.", "它总是运行。")
                 + statement("t-4", True, "It runs.", "它会运行。"))
    assert lint_bank(one) == [] and lint_bank(other) == []
    assert any("all banks: true/false statements with an absolute word (en) are 0 true and 2 false" in p
               for p in lint_across([one, other]))


def test_absolute_words_only_in_wrong_choices_are_a_tell(tmp_path):
    tell = single("q-0", ["the saved output changed", "in-place is never allowed", "sum has no formula"])
    problems = lint_bank(bank(tmp_path, tell))
    assert any('question "q-0": only wrong choices use absolute words (en: never in b)' in p for p in problems)
    reworded = single("q-0", ["the saved output changed", "in-place needs no_grad", "sum has no formula"])
    assert not any("absolute words" in p for p in lint_bank(bank(tmp_path, reworded)))
    both = single("q-0", ["it never saves the input", "in-place is never allowed", "sum has no formula"])
    assert not any("absolute words" in p for p in lint_bank(bank(tmp_path, both)))


def test_an_answer_that_repeats_the_number_in_the_question_is_a_tell(tmp_path):
    echo = numeric("n-0", "Called with ${n} different lengths, each twice. How many compiles?", "n",
                   "params = { n = { range = [2, 5] } }")
    problems = lint_bank(bank(tmp_path, echo))
    assert any('question "n-0": the answer repeats a number the question shows in 4 of 4 draw(s)' in p
               for p in problems), problems
    fixed = numeric("n-0", "Called with ${n} lengths, each twice, then once in int32. How many compiles?", "n + 1",
                    "params = { n = { range = [2, 5] } }")
    assert lint_bank(bank(tmp_path, fixed)) == []
    fixed_text = numeric("n-1", "It runs f(1), f(2), f(3), f(2). How many traces?", "", "").replace(
        'answer_expr = ""', "answer = 3")
    assert any('question "n-1": the answer repeats a number' in p for p in lint_bank(bank(tmp_path, fixed_text)))


def test_only_the_right_choice_repeating_a_stem_number_is_a_tell(tmp_path):
    body = single("q-0", ["48 rows", "a bucket", "the batch"]).replace('"Pick one."', '"Pad 48 rows to what?"')
    assert any("the answer repeats a number" in p for p in lint_bank(bank(tmp_path, body)))


def test_a_one_sided_contrast_makes_the_right_choice_the_odd_one_out(tmp_path):
    body = single("q-0", ["built first", "runs at once", "steered by Python"]).replace(
        '"Pick one."', '"Which describes a static graph rather than a dynamic one?"').replace(
        '"选一个。"', '"哪一项描述的是静态图，而不是动态图？"')
    problems = lint_bank(bank(tmp_path, body))
    assert any('question "q-0": asks which choice is on one side of a contrast (en)' in p for p in problems)
    assert any("one side of a contrast (zh-hans)" in p for p in problems)
    assert bank_numbers(bank(tmp_path, body)).odd_one_out == 1
    why = single("q-1", ["no unrolling", "less memory", "faster tracing"]).replace(
        '"Pick one."', '"Why use fori_loop rather than a Python for?"')
    assert lint_bank(bank(tmp_path, why)) == []


def test_the_shipped_banks_pass_the_lint_across_banks():
    content = load_content(ROOT / "exercises")
    assert lint_across(content.banks) == []
