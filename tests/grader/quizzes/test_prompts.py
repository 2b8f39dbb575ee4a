"""Open-ended interview items: a model answer, a rubric to score against, follow-ups in the flow."""
import shutil
from pathlib import Path

import pytest

from grader.quizzes import (
    ContentError,
    InterviewTemplate,
    load_content,
    load_prompts,
    load_topics,
    plan_interview,
    prompt_for,
)

ROOT = Path(__file__).resolve().parents[3]
TOPICS = load_topics(ROOT / "exercises" / "quizzes" / "topics.toml")
PROMPT = '''
[[prompt]]
id = "why-slow"
kind = "diagnosis"
topic = "performance"
text.en = "Why is it slow?"
text.zh-hans = "为什么慢？"
model_answer.en = "Because of X."
model_answer.zh-hans = "因为 X。"
rubric = [
  { id = "names-x", points = 2, en = "Names X", zh-hans = "说出 X" },
  { id = "names-y", points = 1, en = "Names Y", zh-hans = "说出 Y" },
]

[[prompt.follow_up]]
id = "and-then"
text.en = "And then?"
text.zh-hans = "然后呢？"
model_answer.en = "Then Z."
model_answer.zh-hans = "然后是 Z。"
rubric = [ { id = "names-z", points = 1, en = "Names Z", zh-hans = "说出 Z" } ]

[[prompt.sample]]
covers = ["names-x", "names-y"]
text.en = "X, and Y too."
text.zh-hans = "答了 X，还有 Y。"

[[prompt.sample]]
covers = ["names-x"]
text.en = "X."
text.zh-hans = "答了 X。"

[[prompt.sample]]
covers = []
text.en = "No idea."
text.zh-hans = "不知道。"
'''


def test_a_prompt_loads_with_its_rubric_and_follow_ups(tmp_path):
    path = tmp_path / "prompts.toml"
    path.write_text(PROMPT, encoding="utf-8")
    prompt = load_prompts(path, TOPICS)["why-slow"]
    assert prompt.max_points == 3 and [c.id for c in prompt.rubric] == ["names-x", "names-y"]
    assert [(f.id, f.kind, f.topic, f.max_points) for f in prompt.follow_ups] == [
        ("and-then", "follow-up", "performance", 1)]
    assert [(s.text["en"], prompt.points_of(s)) for s in prompt.samples] == [("X, and Y too.", 3), ("X.", 2),
                                                                             ("No idea.", 0)]


@pytest.mark.parametrize(("change", "message"), [
    (('covers = ["names-x"]\n', 'covers = ["names-x", "names-q"]\n'),
     'sample[1]: covers names names-q, not a line of this prompt\'s rubric'),
    (('covers = ["names-x"]\n', 'covers = ["names-x", "names-y"]\n'),
     "its sample answers score 3, 3, 0: give each a different score"),
    (('[[prompt.sample]]\ncovers = []\ntext.en = "No idea."\ntext.zh-hans = "不知道。"\n', ""),
     'prompt "why-slow": needs at least 3 scored sample answers ([[prompt.sample]]), has 2'),
    (('text.zh-hans = "答了 X。"\n', ""), "sample[1]: text.zh-hans is missing"),
])
def test_sample_answers_are_checked_against_the_rubric(tmp_path, change, message):
    path = tmp_path / "prompts.toml"
    assert change[0] in PROMPT
    path.write_text(PROMPT.replace(*change), encoding="utf-8")
    with pytest.raises(ContentError) as error:
        load_prompts(path, TOPICS)
    assert message in str(error.value)


def test_every_shipped_prompt_has_three_sample_answers_of_different_worth():
    prompts = load_content(ROOT / "exercises").prompts
    assert prompts
    for prompt in prompts.values():
        scores = [prompt.points_of(s) for s in prompt.samples]
        assert len(scores) >= 3 and len(set(scores)) == len(scores), prompt.id
        assert max(scores) > 0 and min(scores) < prompt.max_points, prompt.id


@pytest.mark.parametrize(("change", "message"), [
    (('rubric = [\n  { id = "names-x"', 'rubric_ = [\n  { id = "names-x"'),
     'prompt "why-slow": rubric must list what a good answer covers'),
    (('kind = "diagnosis"', 'kind = "essay"'), "kind must be one of design, diagnosis"),
    (('model_answer.zh-hans = "然后是 Z。"\n', ""), 'follow_up[0]: model_answer.zh-hans is missing'),
    (('points = 2', 'points = 0'), "rubric[0]: points must be a positive whole number"),
])
def test_a_broken_prompt_is_refused_with_a_message_that_names_it(tmp_path, change, message):
    path = tmp_path / "prompts.toml"
    path.write_text(PROMPT.replace(*change), encoding="utf-8")
    with pytest.raises(ContentError) as error:
        load_prompts(path, TOPICS)
    assert any(message in problem for problem in error.value.problems), error.value.problems


def test_the_shipped_prompts_and_the_template_that_asks_them():
    content = load_content(ROOT / "exercises")
    assert len(content.prompts) >= 5 and {p.kind for p in content.prompts.values()} == {"design", "diagnosis"}
    assert all(p.follow_ups for p in content.prompts.values())
    template = next(t for t in content.templates if t.id == "systems-design-and-diagnosis-40")
    plan = plan_interview(InterviewTemplate.from_dict(template.to_dict()), content.questions, seed=7)
    open_items = [item.ref for item in plan if item.kind == "open"]
    assert open_items == [
        "compiled-slower-than-eager", "compiled-slower-than-eager/module-int-recompiles",
        "compiled-slower-than-eager/prove-the-fix",
        "serve-without-python", "serve-without-python/export-fails-on-branch",
    ]
    follow_up = prompt_for(template.sections[plan[-1].section], plan[-1].ref)
    assert follow_up.kind == "follow-up" and follow_up.text["en"].startswith("Export fails")


def test_a_template_naming_an_unknown_prompt_is_refused(tmp_path):
    root = tmp_path / "exercises"
    shutil.copytree(ROOT / "exercises" / "quizzes", root / "quizzes")
    shutil.copytree(ROOT / "exercises" / "interviews", root / "interviews")
    template = root / "interviews" / "systems-design-and-diagnosis.toml"
    template.write_text(template.read_text(encoding="utf-8").replace('"serve-without-python"', '"no-such-prompt"'),
                        encoding="utf-8")
    problems = load_content(root).problems["interviews/systems-design-and-diagnosis.toml"]
    assert any("prompt 'no-such-prompt' is not in interviews/prompts.toml" in p for p in problems)
