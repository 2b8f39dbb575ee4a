"""grader.contract: the result document the judge writes and the host reads.

The format is pinned here on purpose: a field added, renamed or dropped on one side must
fail these tests (and be a deliberate change of FORMAT), not turn every grading into
INTERNAL_ERROR in production.
"""
from __future__ import annotations

import ast
import json
import sys

import pytest

from grader import contract
from grader.contract import CheckRow, ContractError, Kind, ResultDocument
from grader.host.pipeline import GRADER_DIR

ROWS = [
    CheckRow("adds", passed=True, visible=True, message="passed", points=2.0, max_points=2.0),
    CheckRow("hidden", passed=False, visible=False, message="wrong answer on a hidden case", points=0.0,
             max_points=1.0, kind=Kind.WRONG_ANSWER, message_id="hidden.wrong_answer", message_params={"n": 3}),
    CheckRow("says", passed=False, visible=True, message="got 3", max_points=1.0, kind=Kind.WRONG_ANSWER,
             message_id="check.failed", message_params={"detail": {"en": "got 3", "zh-hans": "得到 3"}},
             title={"en": "Says why", "zh-hans": "说明原因"}),
    CheckRow("compares", passed=False, visible=True, message="x: expected 8, got 9", max_points=1.0,
             kind=Kind.WRONG_ANSWER, message_id="compare.expected_got",
             message_params={"what": {"en": "x", "zh-hans": "x"}, "expected": "8", "got": "9"},
             expected="8", got="9"),
    CheckRow("stopped", passed=False, visible=True, message="not run: no answer within 5 s (time limit)",
             kind=Kind.TIME_LIMIT, message_id="not_run.stopped", line=7,
             message_params={"reason": {"message_id": "stop.no_answer", "message_params": {"seconds": 5}},
                             "error": "while loading your code: no answer within 5 s (time limit)"}),
]


def document(**fields) -> ResultDocument:
    return ResultDocument(**{"checks": list(ROWS), "perf": {"cases": []}, "stdout": "hi", "notes": ["n"], **fields})


def raw(data: dict) -> bytes:
    return json.dumps(data).encode()


def test_a_document_survives_the_round_trip():
    original = document()
    assert ResultDocument.from_json(original.to_json()) == original


def test_the_format_is_pinned():
    """Change these only together with FORMAT, the judge and the host."""
    assert contract.FORMAT == 4
    assert contract.LANGUAGES == ("en", "zh-hans")
    assert set(document().to_dict()) == {"format", "checks", "perf", "stdout", "stderr", "notes", "isolated",
                                         "internal_error", "operator_log", "fresh_imports"}
    assert set(ROWS[0].to_dict()) == {"name", "passed", "visible", "message", "points", "max_points", "kind",
                                      "message_id", "message_params", "title", "expected", "got", "line"}
    assert [str(kind) for kind in Kind] == [
        "ACCEPTED", "PARTIAL", "WRONG_ANSWER", "TOO_SLOW", "TIME_LIMIT", "MEMORY_LIMIT", "OUTPUT_LIMIT",
        "RUNTIME_ERROR", "SYNTAX_ERROR", "INTERNAL_ERROR",
    ]


def test_a_document_of_another_format_is_refused_by_name():
    data = document().to_dict() | {"format": 1}
    with pytest.raises(ContractError, match="format 1; this host reads format 4"):
        ResultDocument.from_json(raw(data))


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.pop("stdout"), "result: missing field stdout"),
        (lambda d: d.update(verdict="ACCEPTED"), "result: unknown field verdict"),
        (lambda d: d["checks"][1].pop("message_id"), r"result.checks\[1\]: missing field message_id"),
        (lambda d: d["checks"][0].update(score=1), r"result.checks\[0\]: unknown field score"),
        (lambda d: d["checks"][1].update(kind="WRONG"), r"result.checks\[1\].kind: 'WRONG' is not a verdict kind"),
        (lambda d: d["checks"][0].update(passed="yes"), r"result.checks\[0\].passed: must be bool, got str"),
        (lambda d: d["checks"][0].update(points="2"), r"result.checks\[0\].points: must be a number"),
        (lambda d: d.update(notes=[1]), "result.notes: must be a list of strings"),
        (lambda d: d.update(perf=[]), "result.perf: must be an object or null"),
        (lambda d: d["checks"][2]["message_params"]["detail"].pop("zh-hans"),
         r"result.checks\[2\].message_params.detail: must be a string, a number, a text in each of en, zh-hans"),
        (lambda d: d["checks"][2]["message_params"].update(detail={"en": "a", "zh-hans": 1}),
         r"result.checks\[2\].message_params.detail: must be"),
        (lambda d: d["checks"][1]["message_params"].update(n=[3]), r"result.checks\[1\].message_params.n: must be"),
        (lambda d: d["checks"][1].update(message_id="made.up"),
         r"result.checks\[1\].message_id: 'made.up' is not a message of this contract"),
        (lambda d: d["checks"][2].update(title={"fr": "Dit"}), r"result.checks\[2\].title: must map languages"),
        (lambda d: d["checks"][3].update(expected=8), r"result.checks\[3\].expected: must be a string or null"),
        (lambda d: d["checks"][4].update(line="7"), r"result.checks\[4\].line: must be an integer or null"),
        (lambda d: d["checks"][4]["message_params"]["reason"].update(message_id="made.up"),
         r"result.checks\[4\].message_params.reason: must be"),
        (lambda d: d["checks"][4]["message_params"]["reason"]["message_params"].update(
            seconds={"message_id": "stop.no_answer", "message_params": {}}),
         r"result.checks\[4\].message_params.reason.message_params.seconds: must be"),
    ],
    ids=["missing", "unknown", "row-missing", "row-unknown", "kind", "bool", "number", "notes", "perf",
         "text-without-chinese", "text-not-a-string", "param-list", "unknown-message", "title-language",
         "expected-not-text", "line-not-int", "reason-unknown-message", "message-nested-twice"],
)
def test_a_changed_field_is_refused_with_its_name(change, message):
    data = document().to_dict()
    change(data)
    with pytest.raises(ContractError, match=message):
        ResultDocument.from_json(raw(data))


@pytest.mark.parametrize("payload, message", [
    (b" " * 100, "not complete JSON"),  # the judge's reserved pages, never overwritten
    (b"[1, 2]", "not a JSON object"),
    (b" " * (contract.RESULT_MAX_BYTES + 1), "larger than"),
])
def test_what_is_no_document_at_all_is_refused(payload, message):
    with pytest.raises(ContractError, match=message):
        ResultDocument.from_json(payload)


def test_a_document_too_large_drops_the_students_output_first():
    big = document(stdout="x" * contract.RESULT_MAX_BYTES, notes=[f"note {i}" for i in range(50)])
    data = big.to_json()
    assert len(data) <= contract.RESULT_MAX_BYTES
    smaller = ResultDocument.from_json(data)
    assert smaller.stdout == "" and len(smaller.notes) == 5 and smaller.checks == big.checks


def test_feedback_is_capped_and_says_so():
    text = contract.cap_text(b"x" * 10_000, limit=100)
    assert text.startswith("x" * 100) and "9900 more bytes not shown" in text


def test_the_contract_needs_nothing_but_the_standard_library():
    """It ships in every bundle, where only the standard library, numpy and torch exist."""
    tree = ast.parse((GRADER_DIR / "contract.py").read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert imported and {name.split(".")[0] for name in imported} <= sys.stdlib_module_names | {"__future__"}


def test_the_message_ids_and_their_parameters_are_the_contracts():
    """The judge fills them and the platform words them: both read the ids from here."""
    assert contract.message_parameters("compare.expected_got") == {"what", "expected", "got"}
    assert contract.message_parameters("error.raised") == {"traceback", "type", "line"}
    assert set(contract.HIDDEN.values()) <= set(contract.MESSAGES)
    assert contract.NOT_LOADED <= set(contract.MESSAGES)
    with pytest.raises(KeyError):
        contract.message_parameters("made.up")


def test_a_checks_words_are_refused_without_every_language():
    text = {"en": "{n} left", "zh-hans": "剩 {n} 个"}
    assert contract.check_localized(text) == text
    with pytest.raises(contract.UntranslatedText, match="has no zh-hans"):
        contract.check_localized({"en": "left"})
    with pytest.raises(contract.UntranslatedText, match="same placeholders"):
        contract.check_localized({"en": "{n} left", "zh-hans": "剩下"})
