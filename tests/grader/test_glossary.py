"""The glossary: one term per concept, and a lint that finds the variants it rejects."""
import shutil
from pathlib import Path

import pytest

from grader.glossary import GlossaryError, lint_content, load_glossary
from grader.quizzes import validate_all

ROOT = Path(__file__).resolve().parents[2]
GLOSSARY = '''
[[term]]
id = "graph-break"
en = "graph break"
zh-hans = "图中断"
definition.en = "Where capture stops."
definition.zh-hans = "捕获停止的地方。"
reject.zh-hans = ["断图"]
reject.en = ["graph-break point"]

[[term]]
id = "eager-execution"
en = "eager execution"
zh-hans = "立即执行"
definition.en = "One op at a time."
definition.zh-hans = "逐个运算执行。"
reject_patterns.zh-hans = ['(?<![A-Za-z_])eager(?![A-Za-z_])']
'''


def content(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / "glossary.toml").write_text(GLOSSARY, encoding="utf-8")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_the_shipped_glossary_loads_and_the_content_uses_none_of_its_rejected_variants():
    terms = load_glossary(ROOT / "exercises" / "glossary.toml")
    assert {"eager-execution", "graph-break", "define-by-run", "dispatch", "autograd-tape"} <= {t.id for t in terms}
    assert lint_content(ROOT / "exercises") == {}


def test_a_rejected_variant_in_chinese_prose_is_reported_with_the_preferred_term(tmp_path):
    root = content(tmp_path, {
        "coding/x/statement.zh-hans.md": "这里会断图。\n\n```python\n# 断图 in code is fine\n```\n",
        "coding/x/statement.md": "断图 in an English file is not Chinese prose.",
    })
    assert lint_content(root) == {"coding/x/statement.zh-hans.md": [
        "coding/x/statement.zh-hans.md, line 1: '断图' is a rejected variant; "
        "the glossary says '图中断' (graph-break)"]}


def test_toml_prose_is_checked_per_language_and_code_spans_are_not_prose(tmp_path):
    root = content(tmp_path, {"quizzes/bank.toml": '''
[[question]]
id = "q-one"
text.en = "A graph-break point in English."
text.zh-hans = "用 eager 模式运行，`eager_calls` 与 `backend=\\"eager\\"` 是代码。"
code = "print('断图')"
'''})
    problems = lint_content(root)["quizzes/bank.toml"]
    assert problems == [
        "quizzes/bank.toml: question[q-one].text.en: 'graph-break point' is a rejected variant; "
        "the glossary says 'graph break' (graph-break)",
        "quizzes/bank.toml: question[q-one].text.zh-hans: 'eager' is a rejected variant; "
        "the glossary says '立即执行' (eager-execution)",
    ]


def test_a_glossary_whose_preferred_term_it_rejects_is_refused(tmp_path):
    path = tmp_path / "glossary.toml"
    path.write_text(GLOSSARY.replace('reject.zh-hans = ["断图"]', 'reject.zh-hans = ["中断"]'), encoding="utf-8")
    with pytest.raises(GlossaryError, match='term "graph-break": the preferred term'):
        load_glossary(path)


def test_validate_all_reports_the_glossary_lint(tmp_path):
    root = tmp_path / "exercises"
    shutil.copytree(ROOT / "exercises" / "quizzes", root / "quizzes")
    shutil.copy(ROOT / "exercises" / "glossary.toml", root / "glossary.toml")
    assert not any(validate_all(root, None).values())
    bank = root / "quizzes" / "autograd.toml"
    bank.write_text(bank.read_text(encoding="utf-8").replace("边运行边定义", "边定义边运行", 1), encoding="utf-8")
    problems = validate_all(root, None)["quizzes/autograd.toml"]
    assert any("'边定义边运行' is a rejected variant; the glossary says '边运行边定义'" in p for p in problems)
