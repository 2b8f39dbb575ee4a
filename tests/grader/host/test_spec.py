"""Loading and validating exercise folders: every mistake names the file and the key."""
from __future__ import annotations

import json

import pytest

from grader.contract import Kind
from grader.host.spec import SpecError, load_exercise, spec_from_stored, stored_spec
from testbed.exercises import TOML, make_exercise
from tests.grader.factories import STATIC_GRAPH


def error_for(tmp_path, **overrides) -> str:
    folder = make_exercise(tmp_path / "ex", **overrides)
    with pytest.raises(SpecError) as caught:
        load_exercise(folder)
    return str(caught.value)


def test_the_static_graph_exercise_loads_with_what_the_catalog_needs():
    spec = load_exercise(STATIC_GRAPH)
    assert spec.id == spec.slug == "static-graph-executor"
    assert spec.version >= 1 and spec.points > 0 and spec.difficulty == "easy"
    assert set(spec.title) == set(spec.summary) == set(spec.statement) == {"en", "zh-hans"}
    assert "StaticGraph" in spec.statement["en"] and "StaticGraph" in spec.statement["zh-hans"]
    assert "class StaticGraph" in spec.starter
    assert spec.limits.memory_mb == 256 and spec.gpu is False
    assert "runs_the_article_example" in spec.visible_checks
    assert any(not c.visible for c in spec.checks), "some checks must stay hidden"
    assert [p.name for p in spec.perf] == ["plan_once_run_many"] and spec.perf[0].at_most == 3.0
    assert {m.name: m.expected for m in spec.mutants}["seed_demo"] == Kind.RUNTIME_ERROR
    assert len(spec.digest) == 64


def test_a_changed_file_changes_the_digest(tmp_path):
    folder = make_exercise(tmp_path / "ex")
    before = load_exercise(folder).digest
    assert load_exercise(folder).digest == before
    (folder / "statement.md").write_text("# Add, reworded\n")
    assert load_exercise(folder).digest != before


def test_a_limit_that_is_not_a_number(tmp_path):
    message = error_for(tmp_path, toml=TOML.replace("memory_mb = 256", 'memory_mb = "2G"'))
    assert message == 'exercise.toml: [limits].memory_mb must be a number, got "2G"'


def test_a_missing_file(tmp_path):
    assert error_for(tmp_path, omit=("statement.zh-hans.md",)).startswith("statement.zh-hans.md: missing")


def test_bad_toml(tmp_path):
    assert error_for(tmp_path, toml=TOML + "\npoints = = 3\n").startswith("exercise.toml: not valid TOML")


def test_an_unknown_key(tmp_path):
    message = error_for(tmp_path, toml=TOML.replace("[limits]", "[limits]\nmemory = 5"))
    assert message.startswith("exercise.toml: unknown key [limits].memory (allowed: ")


FAST_PERF = "@perf()\ndef fast(s, r, g): pass\n"


def test_a_threshold_without_a_baseline(tmp_path):
    checks = "from grader.harness import check, perf\n@check()\ndef a(s, r, g): pass\n" + FAST_PERF
    message = error_for(tmp_path, checks=checks, toml=TOML.replace('visible = ["adds_small_numbers"]', "visible = []")
                        + "\n[perf.fast]\nat_most = 2\n")
    assert message.startswith("exercise.toml: [perf.fast].baseline is missing")


def test_a_perf_case_without_a_threshold(tmp_path):
    checks = "from grader.harness import check, perf\n@check()\ndef a(s, r, g): pass\n" + FAST_PERF
    message = error_for(tmp_path, checks=checks, toml=TOML.replace('visible = ["adds_small_numbers"]', "visible = []"))
    assert message == "exercise.toml: [perf.fast] is missing: checks.py declares @perf fast without a threshold"


def test_a_visible_check_that_does_not_exist(tmp_path):
    message = error_for(tmp_path, toml=TOML.replace('visible = ["adds_small_numbers"]', 'visible = ["nope"]'))
    assert 'names "nope"' in message and message.startswith("exercise.toml: [checks].visible")


def test_a_mutant_without_its_verdict(tmp_path):
    message = error_for(tmp_path, files={"mutants/off_by_one.py": "def add(a, b):\n    return a + b + 1\n"})
    assert message.startswith("exercise.toml: [mutants].off_by_one is missing")


def test_a_mutant_expected_to_pass(tmp_path):
    message = error_for(tmp_path, toml=TOML + '\n[mutants]\nsame = "ACCEPTED"\n',
                        files={"mutants/same.py": "def add(a, b): return a + b\n"})
    assert message == "exercise.toml: [mutants].same must be a failing verdict, got ACCEPTED"


OFF_BY_ONE = {"mutants/off_by_one.py": "def add(a, b):\n    return a + b + 1\n"}
WITH_MUTANT = TOML + '\n[mutants]\noff_by_one = "WRONG_ANSWER"\n'


def test_why_each_mutant_fails_is_kept_in_both_languages_and_survives_storing(tmp_path):
    why = '[off_by_one]\nen = "Adds one too many."\nzh-hans = "多加了一。"\n'
    folder = make_exercise(tmp_path / "ex", toml=WITH_MUTANT, files={**OFF_BY_ONE, "mutants/why.toml": why})
    spec = load_exercise(folder)
    assert spec.mutants[0].why == {"en": "Adds one too many.", "zh-hans": "多加了一。"}
    files = {p.relative_to(folder).as_posix(): p.read_text() for p in folder.rglob("*") if p.is_file()}
    again = spec_from_stored(json.loads(json.dumps(stored_spec(spec))), files, folder)
    assert again.mutants[0].why == spec.mutants[0].why


HALF_WRITTEN = "mutants/why.toml: [off_by_one] must say why it fails in en and zh-hans"


@pytest.mark.parametrize(("why", "expected"), [
    ('[off_by_one]\nen = "Adds one too many."\n', HALF_WRITTEN),
    ('[off_by_one]\nen = "x"\nzh-hans = " "\n', HALF_WRITTEN),
    ('[other]\nen = "x"\nzh-hans = "y"\n', "mutants/why.toml: [other] explains no mutant (its mutants: off_by_one)"),
    ("[off_by_one\n", "mutants/why.toml: "),
])
def test_a_why_file_that_explains_too_little_or_the_wrong_mutant(tmp_path, why, expected):
    message = error_for(tmp_path, toml=WITH_MUTANT, files={**OFF_BY_ONE, "mutants/why.toml": why})
    assert message.startswith(expected)


def test_a_stored_spec_from_before_the_why_file_reads_without_explanations(tmp_path):
    folder = make_exercise(tmp_path / "ex", toml=WITH_MUTANT, files=OFF_BY_ONE)
    stored = stored_spec(load_exercise(folder))
    del stored["why"]
    files = {p.relative_to(folder).as_posix(): p.read_text() for p in folder.rglob("*") if p.is_file()}
    assert spec_from_stored(stored, files, folder).mutants[0].why == {}


def test_a_syntax_error_in_the_solution(tmp_path):
    assert error_for(tmp_path, solution="def add(a, b)\n    return a + b\n").startswith("solution.py: line 1:")


def test_a_missing_language(tmp_path):
    message = error_for(tmp_path, toml=TOML.replace('zh-hans = "加法"\n', ""))
    assert message == "exercise.toml: [title].zh-hans is missing"


def test_thresholds_in_the_decorator_are_refused(tmp_path):
    checks = ("from grader.harness import check, perf\n@check()\ndef a(s, r, g): pass\n"
              "@perf(at_most=2)\ndef fast(s, r, g): pass\n")
    message = error_for(tmp_path, checks=checks, toml=TOML.replace('visible = ["adds_small_numbers"]', "visible = []"))
    assert message == ("checks.py: @perf fast: unknown argument at_most; "
                       "thresholds and baselines belong in exercise.toml [perf.fast]")


def test_visible_in_the_decorator_must_agree_with_the_toml(tmp_path):
    checks = ("from grader.harness import check\n@check(visible=True)\ndef adds_small_numbers(s, r, g): pass\n"
              "@check(visible=True)\ndef b(s, r, g): pass\n")
    message = error_for(tmp_path, checks=checks)
    assert message == ('exercise.toml: [checks].visible lacks "b", but checks.py says @check(visible=True); '
                       "make them agree")


def test_a_stored_spec_is_the_loaded_one_without_validating_again(tmp_path):
    folder = make_exercise(tmp_path / "tiny-adder")
    (folder / "mutants").mkdir()
    (folder / "mutants" / "subtracts.py").write_text("def add(a, b):\n    return a - b\n")
    toml = folder / "exercise.toml"
    toml.write_text(toml.read_text() + '\n[mutants]\nsubtracts = "WRONG_ANSWER"\n')
    spec = load_exercise(folder)
    files = {str(p.relative_to(folder)): p.read_text() for p in folder.rglob("*") if p.is_file()}
    stored = json.loads(json.dumps(stored_spec(spec)))  # as a JSON field keeps it
    files["exercise.toml"] = "not toml at all ["  # never read again: the spec was validated at publish
    assert spec_from_stored(stored, files, folder) == spec
    with pytest.raises(SpecError, match="format"):
        spec_from_stored({**stored, "format": 0}, files, folder)


# --- [[rules]]: what a solution may not use ------------------------------------------------

RULE = """
[mutants]
library_adds = "WRONG_ANSWER"

[[rules]]
modules = ["operator"]
calls = ["sum"]
mutants = ["library_adds"]
reason.en = "add the numbers yourself"
reason.zh-hans = "自己把两个数加起来"
"""
LIBRARY_ADDS = {"mutants/library_adds.py": "import operator\n\ndef add(a, b):\n    return operator.add(a, b)\n"}


def test_rules_are_read_and_reach_the_judges_manifest(tmp_path):
    from grader.host.pipeline import manifest_for

    spec = load_exercise(make_exercise(tmp_path / "ex", toml=TOML + RULE, files=LIBRARY_ADDS))
    [rule] = spec.rules
    assert rule.modules == ["operator"] and rule.attributes == [] and rule.calls == ["sum"]
    assert rule.mutants == ["library_adds"] and rule.reason["zh-hans"] == "自己把两个数加起来"
    assert manifest_for(spec, seed=1)["rules"] == [{
        "modules": ["operator"], "attributes": [], "calls": ["sum"],
        "reason": {"en": "add the numbers yourself", "zh-hans": "自己把两个数加起来"}}]


@pytest.mark.parametrize("change, expected", [
    (("calls = [\"sum\"]", "call = [\"sum\"]"), "unknown key call"),
    (("modules = [\"operator\"]", "modules = [\"not a module\"]"), "modules must be a list of dotted names"),
    (("reason.zh-hans = \"自己把两个数加起来\"\n", ""), "reason must say why in every language"),
    (("mutants = [\"library_adds\"]", "mutants = [\"no_such_mutant\"]"), "mutants must list the mutants"),
    (("mutants = [\"library_adds\"]\n", ""), "mutants must list the mutants"),
    (("modules = [\"operator\"]\ncalls = [\"sum\"]\n", ""), "name at least one of modules, attributes or calls"),
])
def test_a_rule_that_cannot_be_enforced_or_proven_is_refused(tmp_path, change, expected):
    toml = TOML + RULE.replace(*change)
    assert expected in error_for(tmp_path, toml=toml, files=LIBRARY_ADDS)


def test_the_reference_must_keep_its_own_rules(tmp_path):
    solution = "import operator\n\ndef add(a, b):\n    return operator.add(a, b)\n"
    message = error_for(tmp_path, toml=TOML + RULE, files=LIBRARY_ADDS, solution=solution)
    assert message.startswith("solution.py: line 1: uses operator") and "[[rules]] number 1" in message


HINTS = """
[[hints]]
en = "Sort the ops once, at build time."
zh-hans = "在构建时把算子排一次序。"

[[hints]]
en = "Keep the plan; execute only walks it."
zh-hans = "把执行计划存起来，execute 只需按它走一遍。"
"""


def test_hints_load_in_order_in_both_languages_and_survive_storing(tmp_path):
    spec = load_exercise(make_exercise(tmp_path / "ex", toml=TOML + HINTS))
    assert [hint["en"] for hint in spec.hints] == ["Sort the ops once, at build time.",
                                                  "Keep the plan; execute only walks it."]
    assert spec.hints[1]["zh-hans"].startswith("把执行计划")
    stored = json.loads(json.dumps(stored_spec(spec)))
    files = {p.relative_to(spec.path).as_posix(): p.read_text() for p in spec.path.rglob("*") if p.is_file()}
    assert spec_from_stored(stored, files, spec.path).hints == spec.hints
    del stored["hints"]  # stored before hints existed
    assert spec_from_stored(stored, files, spec.path).hints == []
    assert load_exercise(make_exercise(tmp_path / "none")).hints == []


@pytest.mark.parametrize("hints, problem", [
    ('[[hints]]\nen = "only English"\n', "hint 1 needs a text in each of en and zh-hans"),
    ('[[hints]]\nen = "x"\nzh-hans = "  "\n', "hint 1 needs a text in each of en and zh-hans"),
    ('[[hints]]\nen = "x"\nzh-hans = "y"\nfr = "z"\n', "hint 1 needs a text in each of en and zh-hans"),
    ('hints = "read the statement"\n', "hints must be [[hints]] tables"),
])
def test_a_hint_missing_a_language_is_refused_by_name(tmp_path, hints, problem):
    toml = hints + TOML if not hints.startswith("[[") else TOML + hints
    assert problem in error_for(tmp_path, toml=toml)
