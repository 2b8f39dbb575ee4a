"""The grading contract: what the judge inside the sandbox and the host outside agree on.

    document = ResultDocument(checks=[CheckRow("adds", passed=True, visible=True, points=1.0, max_points=1.0)])
    path.write_bytes(document.to_json())          # the judge, inside the sandbox
    document = ResultDocument.from_json(raw)      # the host; ContractError says what is wrong

Standard library only, and shipped in every bundle next to the harness: the judge writes its
result through this module, the host reads it through this module, and the platform's
verdict field takes its choices from ``Kind``. The bundle's file names, the size caps and
the environment names both sides use are defined here and nowhere else.

A document is read strictly: another format version, a missing field, a field this module
does not know or a value of the wrong type is refused with a ContractError that names it.
Change a field here and the judge and the host change together; the tests in
tests/grader/test_contract.py pin the format so that a change must be deliberate.
"""
from __future__ import annotations

import ast
import dataclasses
import enum
import gc
import hashlib
import hmac
import importlib
import importlib.machinery
import json
import os
import string
import sys
import warnings
from collections.abc import Iterable, Mapping, Sequence
from types import ModuleType
from typing import Any, TypedDict

# Of the result document; 2 added message_id and message_params to rows, and operator_log;
# 3 lets a message parameter be a text in every language of LANGUAGES (a check's own words),
# and adds fresh_imports; 4 adds a row's structured fields (title, expected, got, line) and
# lets a parameter be a message of its own (the reason a check was not run).
FORMAT = 4

# The bundle, as the judge finds it in its working folder.
MANIFEST_FILE = "exercise/manifest.json"
CHECKS_FILE = "exercise/checks.py"
SOLUTION_FILE = "exercise/solution.py"
SUBMISSION_FILE = "submission/submission.py"
RESULT_FILE = "result.json"  # in the sandbox's output folder; only the judge can write it
# Beside it: result.json's HMAC under the run's secret, which only the judge received (the
# sandbox hands it to the trusted program alone, on a private pipe). A result without it
# proves nothing, whoever wrote it.
RESULT_MAC_FILE = "result.mac"

RESULT_MAX_BYTES = 1 << 20  # the judge reserves this much up front; the host reads no more
FEEDBACK_BYTES = 8 * 1024  # of each stream a student printed: enough to debug, small enough to store

# Set by the host for a sandbox in unisolated development mode: the judge then runs the
# student under its own uid, and the verdict says so.
UNISOLATED_ENV = "GRADER_UNISOLATED"


class ContractError(ValueError):
    """A result document this host cannot read; str() names the field or the format."""


class Kind(enum.StrEnum):
    """Every verdict a submission, or one of its checks, can get."""

    ACCEPTED = "ACCEPTED"
    PARTIAL = "PARTIAL"
    WRONG_ANSWER = "WRONG_ANSWER"
    TOO_SLOW = "TOO_SLOW"
    TIME_LIMIT = "TIME_LIMIT"
    MEMORY_LIMIT = "MEMORY_LIMIT"
    OUTPUT_LIMIT = "OUTPUT_LIMIT"
    RUNTIME_ERROR = "RUNTIME_ERROR"
    SYNTAX_ERROR = "SYNTAX_ERROR"
    INTERNAL_ERROR = "INTERNAL_ERROR"  # a platform fault: retried, never charged to the student


# The site's languages, defined here alone: the judge writes in them, the content is written in
# them, and the platform shows them (this module ships in every bundle, so all can import it).
LANGUAGES = ("en", "zh-hans")
Localized = dict[str, str]  # language -> text, for every language of LANGUAGES
# A parameter is a value (a string or a number, shown as data), a Localized text (a check's own
# words), or a message of its own, {"message_id": ..., "message_params": {...}} whose parameters
# are values or texts (the stop that kept a check from running).
MessageParams = dict[str, Any]


# --- the judge's messages ------------------------------------------------------------------
# Every message the judge writes into a check row: a stable id and its English template with
# str.format placeholders. The judge fills them (grader/harness/messages.py); the platform
# words each id in the reader's language (platform/workbench/messages.py), with the same
# parameter names (message_parameters). Add an id here and there together.

MESSAGES: dict[str, str] = {
    "check.passed": "passed",
    "check.failed": "{detail}",  # the exercise's own words about a wrong answer (visible cases), localized
    "check.changed_input": "your code changed its input (argument {argument}) in place; leave the inputs untouched",
    "error.raised": "{traceback}",  # the student's own exception, their own frames only (visible cases)
    "error.unusable_value": "the judge could not use what your code returned",
    "hidden.failed": "a hidden check failed",  # every failure of a hidden check, whatever it was (HIDDEN_FAILED)
    # A performance case's failure that is not a measurement (it raised, stopped, or answered wrong);
    # hidden correctness checks wrote these too before they all became hidden.failed.
    "hidden.wrong_answer": "wrong answer on a hidden case",
    "hidden.time_limit": "time limit reached on a hidden case",
    "hidden.too_slow": "too slow on a hidden performance case",
    "hidden.memory_limit": "memory limit reached on a hidden case",
    "hidden.output_limit": "too much output on a hidden case",
    "hidden.runtime_error": "your code failed on a hidden case",
    "not_run.correctness_failed": "not run: a correctness check failed",
    "not_run.syntax_error": "not run: your code has a syntax error",
    "not_run.load_error": "not run: your code raised an error while loading",
    "not_run.stopped": "not run: {reason}",
    # An exercise's rules (exercise.toml [[rules]]): {api} is the refused name, {reason} the
    # exercise's own words (a localized text) for why.
    "rules.refused": "not run: your code uses {api} (line {line}), which this exercise does not allow: {reason}",
    "rules.refused_import": "your code imported {api}, which this exercise does not allow: {reason}",
    "stop.budget_used": "the time limit was used up by earlier checks",
    "stop.no_answer": "no answer within {seconds} s (time limit)",
    "stop.cpu_limit": "CPU time limit reached ({seconds} s)",
    "stop.memory_limit": "memory limit reached",
    "stop.output_limit": "your program printed more than {limit} bytes",
    "stop.file_too_large": "your program wrote a file larger than {limit} bytes",
    "stop.killed": "your program was killed by {signal}",
    "stop.exited": "your program exited (status {status}) in the middle of a check",
    "stop.closed_channel": "your program closed the judge's channel",
    "stop.bad_reply": "your program's reply to the judge was not valid",
    "stop.cannot_start": "your program could not be started ({reason})",
    "stop.unpausable": "your program kept running while it should have been paused",
    # Performance: numbers only (ratio = the student's time / the baseline's), worded by the platform.
    "perf.pass": (
        "fast enough: {ratio}x the {baseline} time (interval {low}-{high}, n={n}); needed at most {at_most}x"),
    "perf.too_slow": (
        "too slow: {ratio}x the {baseline} time (interval {low}-{high}, n={n}); needed at most {at_most}x"),
    "perf.undecided": (
        "measuring again: the machine was busy, and {ratio}x the {baseline} time (interval {low}-{high}, n={n}) "
        "did not settle against at most {at_most}x"),
    "perf.pass_by_median": (
        "fast enough, by the median and the total time: {ratio}x the {baseline} time "
        "(interval {low}-{high}, n={n}, measured twice "
        "without settling); needed at most {at_most}x"),
    "perf.too_slow_by_median": (
        "too slow, by the median and the total time: {ratio}x the {baseline} time "
        "(interval {low}-{high}, n={n}, measured twice "
        "without settling); needed at most {at_most}x"),
    # Stored verdicts from before the rule that never passes an unsettled interval:
    "perf.within_noise": (
        "within noise: {ratio}x the {baseline} time (interval {low}-{high}, n={n}); needed at most {at_most}x; "
        "not counted against you"),
    "perf.too_few_pairs": (
        "too slow: only {n} timed calls fitted in the {budget} s budget, and a decision needs {needed}; "
        "needed at most {at_most}x the {baseline} time"
    ),
    # What the checks API (api.py) says about a wrong answer. ``what`` names the value in the
    # exercise's words (a localized text); ``expected``, ``got``, ``key``, ``index``... are data.
    "compare.returned_handle": (
        "{what}: expected {expected}, got {got}; return plain values (numbers, lists, dicts, arrays)"),
    "compare.not_a_dict": "{what}: expected a dict, got {got}",
    "compare.missing_key": "{what} is missing key {key}",
    "compare.unexpected_key": "{what} has an unexpected key {key}",
    "compare.not_a_sequence": "{what}: expected a {expected}, got {got}",
    "compare.length": "{what}: expected {expected} items, got {got}",
    "compare.expected_got": "{what}: expected {expected}, got {got}",
    "compare.not_a_number": "{what}: expected the number {expected}, got {got}",
    "compare.nan": "{what}: expected {expected}, got {got} (NaN must match NaN)",
    "compare.difference": "{what}: expected {expected}, got {got} (difference {difference})",
    "compare.not_a_tensor": "{what}: expected a torch tensor, got {got}",
    "compare.not_an_array": "{what}: expected a numpy array, got {got}",
    "compare.tensor_dtype": "{what}: expected dtype torch.{expected}, got torch.{got}",
    "compare.dtype": "{what}: expected dtype {expected}, got {got}",
    "compare.shape": "{what}: expected shape {expected}, got {got}",
    "compare.nan_positions": "{what}: NaN positions differ, first at index {index}: expected {expected}, got {got}",
    "compare.inf_positions": (
        "{what}: infinity positions differ, first at index {index}: expected {expected}, got {got}"),
    "compare.inf_at": "{what}: expected {expected} at index {index}, got {got}",
    "compare.elements": (
        "{what}: {count} of {size} elements differ; first at index {index}: expected {expected}, got {got}"),
    "compare.elements_within": (
        "{what}: {count} of {size} elements differ (rtol={rtol}, atol={atol}); "
        "first at index {index}: expected {expected}, got {got}"),
    "raises.wrong_message": "{what} raised {error}: {message}, but the message should mention {fragments}",
    "raises.returned": "expected {what} to raise an error, but it returned normally",
    "raises.returned_mentioning": "expected {what} to raise an error mentioning {fragments}, but it returned normally",
}

# A hidden check's failed row is one row whatever went wrong inside: the student's process
# chose how to fail after it saw the hidden input, so a kind (an error, a wrong answer, a
# timeout, memory, output) would carry that input out, two bits and more per check and
# grading. It reads "a hidden check failed", is a wrong answer, and has no parameter, no
# expected, got or line; the judge writes it so and the host rebuilds it so (hidden_failure).
HIDDEN_FAILED = "hidden.failed"
HIDDEN_FAILURE_KIND = Kind.WRONG_ANSWER

# A performance case runs before any hidden input exists, but its inputs come from the secret
# seed too: a failure that is not a measurement shows one of these fixed texts per kind.
HIDDEN: dict[str, str] = {
    "WRONG_ANSWER": "hidden.wrong_answer",
    "TIME_LIMIT": "hidden.time_limit",
    "TOO_SLOW": "hidden.too_slow",
    "MEMORY_LIMIT": "hidden.memory_limit",
    "OUTPUT_LIMIT": "hidden.output_limit",
    "RUNTIME_ERROR": "hidden.runtime_error",
}

# Rows whose check never ran because the student's code could not be loaded: the page shows
# that one error (and its line) instead of every check.
NOT_LOADED = frozenset({"not_run.syntax_error", "not_run.load_error", "not_run.stopped"})


class UntranslatedText(BaseException):
    """A check's own words without every language, or with placeholders that differ between them.

    A BaseException, so that the judge's ``except Exception`` around a check (which blames
    the student's values) lets it through: an exercise's fault is a platform fault.
    """


def placeholders(template: str) -> set[str]:
    """The names a ``str.format`` template fills: ``"{x!r} of {shape[0]}"`` -> {"x", "shape"}."""
    names = set()
    try:
        for _, field, _, _ in string.Formatter().parse(template):
            if field is not None:
                names.add(field.split(".", 1)[0].split("[", 1)[0])
    except ValueError as error:  # a lone brace: write {{ or }} for a brace in the text
        raise UntranslatedText(f"{template!r} is not a valid template: {error}") from None
    return names


# Parameters a message carries beyond its English template's, for the platform's wording.
# ``error``: the student's own error that kept their code from loading (its frames only), which
# the page shows once in place of every check.
EXTRA_PARAMETERS: dict[str, frozenset[str]] = {
    "error.raised": frozenset({"type", "line"}),
    **{message_id: frozenset({"error"}) for message_id in ("not_run.syntax_error", "not_run.load_error",
                                                            "not_run.stopped")},
}


def message_parameters(message_id: str) -> frozenset[str]:
    """The parameter names message ``message_id`` carries (KeyError for an unknown id)."""
    return frozenset(placeholders(MESSAGES[message_id])) | EXTRA_PARAMETERS.get(message_id, frozenset())


def check_localized(template: object, *, is_template: bool = True) -> Localized:
    """``template`` as a Localized, or UntranslatedText saying what is missing. A plain text
    (``is_template=False``: braces are text, not placeholders) needs only every language."""
    example = '{"en": "...{x}...", "zh-hans": "...{x}..."}'
    if isinstance(template, str):
        raise UntranslatedText(f"give the text in every language, e.g. {example}, not only {template[:60]!r}")
    if not isinstance(template, Mapping) or not all(isinstance(v, str) for v in template.values()):
        raise UntranslatedText(f"a text must be a dict of language to string such as {example}")
    missing = [language for language in LANGUAGES if not str(template.get(language, "")).strip()]
    if missing:
        raise UntranslatedText(f"the text {dict(template)!r} has no {', '.join(missing)}")
    unknown = sorted(set(template) - set(LANGUAGES))
    if unknown:
        raise UntranslatedText(f"the text {dict(template)!r} has unknown languages {unknown}; use {list(LANGUAGES)}")
    wanted = placeholders(template["en"]) if is_template else set()
    for language in LANGUAGES if is_template else ():
        if placeholders(template[language]) != wanted:
            raise UntranslatedText(
                f"the {language} text {template[language]!r} fills {sorted(placeholders(template[language]))}, "
                f"the English one {sorted(wanted)}: every language needs the same placeholders")
    return {language: template[language] for language in LANGUAGES}


def is_localized(value: object) -> bool:
    """Whether a parameter is a text in every language of LANGUAGES."""
    return isinstance(value, dict) and set(value) == set(LANGUAGES)


def is_message(value: object) -> bool:
    """Whether a parameter is a message of its own ({"message_id": ..., "message_params": ...})."""
    return isinstance(value, dict) and set(value) == {"message_id", "message_params"}


@dataclasses.dataclass(frozen=True)
class CheckRow:
    """How one check (correctness or performance) ended."""

    name: str
    passed: bool
    visible: bool
    message: str = ""  # for a hidden check: fixed text, never an input or an expected value
    points: float = 0.0
    max_points: float = 1.0
    kind: Kind | None = None  # why it failed; None when it passed
    message_id: str = ""  # names ``message`` for translation: a key of MESSAGES ("" when it has no fixed form)
    message_params: MessageParams = dataclasses.field(default_factory=dict)
    # Structured fields, so that nothing reads them back out of ``message``. ``title``: the
    # check's name per language as its decorator gives it ({} when it gives none);
    # ``expected``/``got``: the values a visible comparison showed; ``line``: the line of the
    # student's submission.py an error of a visible check (or of loading it) points at.
    title: dict[str, str] = dataclasses.field(default_factory=dict)
    expected: str | None = None
    got: str | None = None
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        row = dataclasses.asdict(self)
        row["kind"] = str(self.kind) if self.kind else None
        return row

    @classmethod
    def from_dict(cls, data: object, where: str = "check") -> CheckRow:
        row = _exact_object(data, where, _ROW_FIELDS)
        kind = row["kind"]
        if kind is not None and kind not in _KINDS:
            raise ContractError(f"{where}.kind: {kind!r} is not a verdict kind")
        message_id = _typed(row, "message_id", str, where)
        if message_id and message_id not in MESSAGES:
            raise ContractError(f"{where}.message_id: {message_id!r} is not a message of this contract")
        params = _params(_typed(row, "message_params", dict, where), f"{where}.message_params", nested=True)
        title = _typed(row, "title", dict, where)
        if not set(title) <= set(LANGUAGES) or not all(type(text) is str for text in title.values()):
            raise ContractError(f"{where}.title: must map languages of {', '.join(LANGUAGES)} to strings")
        line = row["line"]
        if line is not None and type(line) is not int:
            raise ContractError(f"{where}.line: must be an integer or null")
        return cls(
            name=_typed(row, "name", str, where),
            passed=_typed(row, "passed", bool, where),
            visible=_typed(row, "visible", bool, where),
            message=_typed(row, "message", str, where),
            points=_number(row, "points", where),
            max_points=_number(row, "max_points", where),
            kind=Kind(kind) if kind is not None else None,
            message_id=message_id,
            message_params=params,
            title=dict(title),
            expected=_optional_string(row, "expected", where),
            got=_optional_string(row, "got", where),
            line=line,
        )


def hidden_failure(name: str, max_points: float, title: Mapping[str, str] | None = None) -> CheckRow:
    """The one row a failed hidden check may have: its name, points and title, nothing it did."""
    return CheckRow(
        name=name, passed=False, visible=False, message=MESSAGES[HIDDEN_FAILED], points=0.0,
        max_points=max_points, kind=HIDDEN_FAILURE_KIND, message_id=HIDDEN_FAILED,
        title={k: v for k, v in (title or {}).items() if k in LANGUAGES and type(v) is str},
    )


@dataclasses.dataclass
class ResultDocument:
    """The judge's one result: every check's row, or why the judge itself failed."""

    checks: list[CheckRow]
    perf: dict[str, Any] | None = None  # {"cases": [...]} when the exercise has performance cases
    stdout: str = ""  # what the student printed before the first hidden check, capped
    stderr: str = ""
    notes: list[str] = dataclasses.field(default_factory=list)
    isolated: bool = True  # False in unisolated development mode
    internal_error: str | None = None  # the judge's own failure: a platform fault, not the student's
    operator_log: list[str] = dataclasses.field(default_factory=list)  # for the operators, never for students
    # Heavy modules a process of this grading imported itself rather than inherited from the
    # sandbox's preload ("reference:torch"): what the zygote is meant to make empty.
    fresh_imports: list[str] = dataclasses.field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "checks": [row.to_dict() for row in self.checks],
            "perf": self.perf,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "notes": list(self.notes),
            "isolated": self.isolated,
            "internal_error": self.internal_error,
            "operator_log": list(self.operator_log),
            "fresh_imports": list(self.fresh_imports),
        }

    def to_json(self) -> bytes:
        """The document in at most RESULT_MAX_BYTES: the student's output and notes go first when it must shrink."""
        data = json.dumps(self.to_dict(), ensure_ascii=False).encode()
        if len(data) > RESULT_MAX_BYTES:
            smaller = dataclasses.replace(
                self, stdout="", stderr="", notes=self.notes[:5], operator_log=self.operator_log[-5:]
            )
            data = json.dumps(smaller.to_dict(), ensure_ascii=False).encode()
        if len(data) > RESULT_MAX_BYTES:
            raise ContractError(f"the result document needs {len(data)} bytes; at most {RESULT_MAX_BYTES} fit")
        return data

    @classmethod
    def from_json(cls, raw: bytes) -> ResultDocument:
        """Read a document the judge wrote; ContractError says why one is refused."""
        if len(raw) > RESULT_MAX_BYTES:
            raise ContractError(f"a result file of {len(raw)} bytes is larger than {RESULT_MAX_BYTES}")
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            raise ContractError("the result file is not complete JSON") from None
        if not isinstance(data, dict):
            raise ContractError("the result file is not a JSON object")
        if data.get("format") != FORMAT:
            found = data.get("format")
            raise ContractError(f"the result document has format {found!r}; this host reads format {FORMAT}")
        document = _exact_object(data, "result", _DOCUMENT_FIELDS)
        checks = _typed(document, "checks", list, "result")
        perf = document["perf"]
        if perf is not None and not isinstance(perf, dict):
            raise ContractError("result.perf: must be an object or null")
        notes = _strings(document, "notes")
        operator_log = _strings(document, "operator_log")
        internal_error = document["internal_error"]
        if internal_error is not None and not isinstance(internal_error, str):
            raise ContractError("result.internal_error: must be a string or null")
        return cls(
            checks=[CheckRow.from_dict(row, f"result.checks[{i}]") for i, row in enumerate(checks)],
            perf=perf,
            stdout=_typed(document, "stdout", str, "result"),
            stderr=_typed(document, "stderr", str, "result"),
            notes=notes,
            isolated=_typed(document, "isolated", bool, "result"),
            internal_error=internal_error,
            operator_log=operator_log,
            fresh_imports=_strings(document, "fresh_imports"),
        )


def result_mac(document: bytes, key: bytes) -> bytes:
    """What the judge writes to RESULT_MAC_FILE: hex HMAC-SHA256 of the document's bytes."""
    return hmac.new(key, document, hashlib.sha256).hexdigest().encode()


def proves_judge(document: bytes, mac: bytes | None, key: bytes) -> bool:
    """Whether ``mac`` shows that ``document`` was written by the holder of ``key``."""
    return bool(key) and mac is not None and hmac.compare_digest(result_mac(document, key), mac.strip())


# A checkpoint is a result document the judge hands the host while it runs (before each hidden
# input goes out: the result this grading has if the sandbox dies from then on), signed like a
# result but under its own label, so that neither can be passed off as the other.
_CHECKPOINT_LABEL = b"graphdojo checkpoint\0"


def seal_checkpoint(document: bytes, key: bytes) -> bytes:
    """What the judge hands over: hex HMAC-SHA256 of the label and the document, a newline, the document."""
    return hmac.new(key, _CHECKPOINT_LABEL + document, hashlib.sha256).hexdigest().encode() + b"\n" + document


def open_checkpoint(sealed: bytes, key: bytes) -> bytes | None:
    """The document of a checkpoint the holder of ``key`` sealed; None for anything else."""
    mac, newline, document = sealed.partition(b"\n")
    if not key or not newline:
        return None
    expected = hmac.new(key, _CHECKPOINT_LABEL + document, hashlib.sha256).hexdigest().encode()
    return document if hmac.compare_digest(expected, mac) else None


def cap_text(data: bytes, limit: int = FEEDBACK_BYTES) -> str:
    """Decode program output for feedback, keeping at most ``limit`` bytes and saying what was cut."""
    text = data[:limit].decode("utf-8", "replace")
    if len(data) > limit:
        text += f"\n[... {len(data) - limit} more bytes not shown]"
    return text


# --- checks.py: what the host reads from its syntax tree and the judge runs -----------------

# The decorators of the checks API (grader.harness.check and .perf) and the literal arguments
# each takes: the host reads a checks.py's cases from them without importing it.
CASE_DECORATORS: dict[str, frozenset[str]] = {
    "check": frozenset({"points", "visible", "title"}),
    "perf": frozenset({"points", "title"}),
}


# --- the manifest: what the host tells the judge about the exercise ------------------------


class PerfTerms(TypedDict):
    """One performance case's threshold, as exercise.toml ``[perf.<name>]`` sets it."""

    name: str
    baseline: str
    at_most: float
    budget_s: float
    margin: float
    speedup: float | None
    clock: str  # "cpu" (what load cannot inflate; the wall clock where a sandbox shows no CPU) or "wall"


class Rule(TypedDict):
    """What a solution of one exercise may not use, and why: exercise.toml ``[[rules]]``.

    ``modules``: a module and everything in it (``torch.utils.checkpoint``); ``attributes``:
    one name reached through its module (``numpy.broadcast_shapes``); ``calls``: a function
    the student may not call, by its dotted or builtin name (``exec``). The judge refuses a
    submission that names one (grader/harness/rules.py, before the run) and the student's
    process never holds a banned module (grader/guard.py, while it runs)."""

    modules: list[str]
    attributes: list[str]
    calls: list[str]
    reason: dict[str, str]  # a text in each of LANGUAGES: why the exercise refuses it


# What the student's process raises when its code imports a banned module: an ImportError of
# this name whose message starts "<rule number>:<module>:" (the judge words the message itself).
RULE_VIOLATION = "RuleViolation"


class Manifest(TypedDict):
    exercise: dict[str, Any]  # id, version, digest
    seed: int
    visible: list[str]  # the names of the visible checks
    perf: dict[str, PerfTerms]
    limits: dict[str, float]  # the student's own limits: sandbox.Limits as a dict
    # The last attempt at this grading: a speed case whose interval never settles is decided
    # by its median rather than measured again.
    settle: bool
    rules: list[Rule]  # what the student's code may not use


# --- strict reading ------------------------------------------------------------------------

_KINDS = frozenset(str(kind) for kind in Kind)
_ROW_FIELDS = frozenset(field.name for field in dataclasses.fields(CheckRow))
_DOCUMENT_FIELDS = frozenset({"format", *(field.name for field in dataclasses.fields(ResultDocument))})


def _exact_object(data: object, where: str, fields: frozenset[str]) -> Mapping[str, Any]:
    if not isinstance(data, dict):
        raise ContractError(f"{where}: must be an object")
    missing = sorted(fields - data.keys())
    if missing:
        raise ContractError(f"{where}: missing field {', '.join(missing)}")
    unknown = sorted(str(key) for key in data.keys() - fields)
    if unknown:
        raise ContractError(f"{where}: unknown field {', '.join(unknown)}")
    return data


def _typed(data: Mapping[str, Any], key: str, kind: type[Any], where: str) -> Any:
    value = data[key]
    if type(value) is not kind:
        raise ContractError(f"{where}.{key}: must be {kind.__name__}, got {type(value).__name__}")
    return value


def _strings(data: Mapping[str, Any], key: str) -> list[str]:
    value = _typed(data, key, list, "result")
    if not all(isinstance(item, str) for item in value):
        raise ContractError(f"result.{key}: must be a list of strings")
    return list(value)


def _params(params: dict[str, Any], where: str, nested: bool) -> MessageParams:
    checked: MessageParams = {}
    for name, value in params.items():
        if type(value) in (str, int, float) or is_localized(value) and all(type(t) is str for t in value.values()):
            checked[name] = dict(value) if isinstance(value, dict) else value
        elif nested and is_message(value) and value["message_id"] in MESSAGES \
                and isinstance(value["message_params"], dict):
            inner = _params(value["message_params"], f"{where}.{name}.message_params", nested=False)
            checked[name] = {"message_id": value["message_id"], "message_params": inner}
        else:
            more = ", or a message of this contract" if nested else ""
            raise ContractError(
                f"{where}.{name}: must be a string, a number, a text in each of {', '.join(LANGUAGES)}{more}")
    return checked


def _optional_string(data: Mapping[str, Any], key: str, where: str) -> str | None:
    value = data[key]
    if value is not None and type(value) is not str:
        raise ContractError(f"{where}.{key}: must be a string or null")
    return value


def _number(data: Mapping[str, Any], key: str, where: str) -> float:
    value = data[key]
    if type(value) not in (int, float):
        raise ContractError(f"{where}.{key}: must be a number, got {type(value).__name__}")
    return float(value)


# --- an exercise's rules, read from a source's syntax tree ---------------------------------
# The static half of exercise.toml [[rules]]: the judge refuses a submission that names a
# banned API (grader/harness/rules.py) and the host proves the reference keeps its own rules
# (grader/host/spec.py), both with this one reading.

# Calls that import the module their first argument names.
_IMPORTERS = {"__import__", "builtins.__import__", "importlib.import_module", "importlib.__import__"}
# Calls that reach (or replace) ``obj.name`` by a name in a string: setattr(torch, "compile", fake).
_ATTRIBUTE_CALLS = {"setattr", "delattr", "hasattr", "builtins.setattr", "builtins.delattr"}


@dataclasses.dataclass(frozen=True)
class Violation:
    """The source uses ``api`` (a name of rule number ``rule``) at ``line``."""

    rule: int
    api: str
    line: int


def banned_name(dotted: str, rules: Sequence[Rule], *, called: bool = False) -> tuple[int, str] | None:
    """(rule number, the banned name) when ``dotted`` is a banned module, attribute, or
    (``called``) a banned call, or lies inside one; else None."""
    for number, rule in enumerate(rules):
        for name in (*rule["modules"], *rule["attributes"]):
            if dotted == name or dotted.startswith(name + "."):
                return number, name
        if called:
            builtin = dotted.removeprefix("builtins.").removeprefix("__builtins__.")
            for name in rule["calls"]:
                if name in (dotted, builtin):
                    return number, name
    return None


def violations(source: str, rules: Sequence[Rule]) -> list[Violation]:
    """Every place ``source`` uses what ``rules`` refuse, in line order (one per line and API).

    A source that does not parse keeps every rule here: its syntax error is reported as such."""
    if not rules:
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    return _Reader(tree, rules).found()


class _Reader:
    def __init__(self, tree: ast.Module, rules: Sequence[Rule]):
        self.tree = tree
        self.rules = rules
        self.aliases: dict[str, str] = {}  # a name in the source -> the dotted name it stands for
        self.hits: dict[tuple[int, str], Violation] = {}
        self.docstrings = {id(node.value) for node in ast.walk(tree)
                           if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}

    def found(self) -> list[Violation]:
        # Aliases first (two rounds: an alias of an alias), then every use.
        for _ in range(2):
            for node in ast.walk(self.tree):
                self._bind(node)
        for node in ast.walk(self.tree):
            self._check(node)
        return sorted(self.hits.values(), key=lambda v: (v.line, v.api))

    # -- what names stand for --

    def _bind(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.aliases[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    self.aliases[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.NamedExpr):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = self.dotted(node.value) if node.value is not None else None
            for target in targets:
                if isinstance(target, ast.Name) and value and value != target.id:
                    self.aliases[target.id] = value

    def dotted(self, node: ast.AST) -> str | None:
        """The dotted name an expression stands for (``np.linalg`` -> ``numpy.linalg``), if any."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call):
            function = self.dotted(node.func)
            name = _constant(node.args[0]) if node.args else None
            if function == "getattr" and len(node.args) >= 2:
                base, attribute = self.dotted(node.args[0]), _constant(node.args[1])
                return f"{base}.{attribute}" if base and attribute else None
            if function in _IMPORTERS and name:
                module = self._imported(function, node) or name
                # __import__("a.b") gives back the package "a" unless it is asked for names.
                wants_names = len(node.args) >= 4 or any(k.arg == "fromlist" for k in node.keywords)
                return module.split(".")[0] if function.endswith("__import__") and not wants_names else module
        return None

    def _imported(self, function: str, call: ast.Call) -> str | None:
        """The absolute module a call of an importer names (relative names resolved by its package)."""
        name = _constant(call.args[0]) if call.args else None
        if not name:
            return None
        if name.startswith(".") and function == "importlib.import_module" and len(call.args) > 1:
            package = _constant(call.args[1])
            if package:
                return f"{package}.{name.lstrip('.')}"
        return name

    # -- uses --

    def _check(self, node: ast.AST) -> None:
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            for alias in node.names:
                self._refuse(alias.name, line)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            self._refuse(node.module, line)
            for alias in node.names:
                if alias.name == "*":
                    self._star(node.module, line)
                else:
                    self._refuse(f"{node.module}.{alias.name}", line)
        elif isinstance(node, ast.Attribute):
            self._refuse(self.dotted(node), line)
        elif isinstance(node, ast.Call):
            function = self.dotted(node.func)
            self._refuse(function, line, called=True)
            if function in _IMPORTERS:
                self._refuse(self._imported(function, node), line)
            if function in _ATTRIBUTE_CALLS and len(node.args) >= 2:
                base, attribute = self.dotted(node.args[0]), _constant(node.args[1])
                self._refuse(f"{base}.{attribute}" if base and attribute else None, line)
            self._refuse(self.dotted(node), line)  # getattr(...) and importers
        elif isinstance(node, ast.Name):
            # A banned name bound by ``from x import y`` (found at the import) or by assignment.
            self._refuse(self.aliases.get(node.id), line, called=False)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in self.docstrings:
            self._refuse(node.value.strip(), line)

    def _star(self, module: str, line: int) -> None:
        for number, rule in enumerate(self.rules):
            for name in (*rule["modules"], *rule["attributes"], *rule["calls"]):
                if name.startswith(module + "."):
                    self._hit(number, name, line)

    def _refuse(self, dotted: str | None, line: int, *, called: bool = False) -> None:
        if not dotted:
            return
        found = banned_name(dotted, self.rules, called=called)
        if found is not None:
            self._hit(*found, line)

    def _hit(self, rule: int, api: str, line: int) -> None:
        self.hits.setdefault((line, api), Violation(rule=rule, api=api, line=line))


def _constant(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def names_of(rules: Iterable[Rule]) -> set[str]:
    """Every name the rules refuse (what a message may name)."""
    return {name for rule in rules for name in (*rule["modules"], *rule["attributes"], *rule["calls"])}


# -- the rules at run time ----------------------------------------------------------------------

# The rules at run time: the student's process never holds a banned module.
#
#     start_ruled(rules, frameworks)     # first thing in a fresh interpreter, before anything is imported
#
# A module the process holds is reachable whatever the import hooks say: as a global of any
# module that imported it (``wire.np``), or among the live objects (``gc.get_objects()``). So
# the student's worker of an exercise with rules is not a fork of the preloaded zygote: it is a
# fresh interpreter (grader/harness/programs.py) whose first act is this, before the harness or
# a framework is imported:
#
# 1. an audit hook (``sys.addaudithook``, which cannot be removed) refuses every import of a
#    banned top-level module (``numpy`` where the exercise bans it), whoever asks for it: it is
#    never loaded at all;
# 2. the frameworks the exercise uses are imported (``torch``). A library that imports a banned
#    submodule at its own import time gets it (``import torch`` imports ``torch.func`` and
#    ``torch.autograd.functional``);
# 3. ``seal_rules()`` drops those submodules: out of ``sys.modules``, off their parent package, no
#    reference kept, collected. From then on the hook refuses every import of a banned module,
#    a library's or the harness's as much as the student's (nothing imports on the student's
#    behalf), and every open of a banned module's files (what loading one from its file does,
#    also where ``importlib`` skips the ``import`` event).
#
# What a library still holds of a dropped submodule stays: torch's higher-order ops keep two
# classes of ``torch.utils.checkpoint``, whose methods' globals are that module's namespace, so
# sealing empties the namespace of every definition no other module holds (the attack through
# gc is in tests/security/test_redteam_round3.py). The static check
# (grader/harness/rules.py) catches what the source names outright; this, what it builds at
# run time.
#
# It lives in the contract because it must run before the harness package (which imports numpy)
# is imported, and the contract is what every bundle ships and is standard library only.

class RuleViolation(ModuleNotFoundError):
    """An import the exercise's rules refuse; str() is ``"<rule number>:<module>: ..."``."""


RuleViolation.__name__ = RULE_VIOLATION
RuleViolation.__qualname__ = RULE_VIOLATION

_SEALED: list[bool] = []  # set once seal_rules() has dropped what the frameworks imported
_INSTALLED: list[bool] = []


def banned_modules(rules: Sequence[Rule]) -> list[tuple[int, str]]:
    """(rule number, module) for every module ``rules`` ban."""
    return [(number, module) for number, rule in enumerate(rules) for module in rule.get("modules", [])]


def is_banned(name: str, rules: Sequence[Rule]) -> bool:
    return any(name == module or name.startswith(module + ".") for _, module in banned_modules(rules))


def start_ruled(rules: Sequence[Rule], frameworks: Sequence[str]) -> None:
    """Install the rules, import the ``frameworks`` the exercise uses (but a banned one), seal."""
    install_rules(rules)
    for framework in frameworks:
        if not is_banned(framework, rules):
            importlib.import_module(framework)
    seal_rules(rules)


def install_rules(rules: Sequence[Rule]) -> None:
    """Refuse, from now on in this process, every import of a banned top-level module, and
    of any banned module once sealed."""
    banned = banned_modules(rules)
    if not banned or _INSTALLED:
        return
    _INSTALLED.append(True)
    owners = [(path, number, module) for number, module in banned for path in _module_files(module)]

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "import":
            name = args[0]
            if not isinstance(name, str):
                return
            for number, module in banned:
                if (name == module or name.startswith(module + ".")) and (_SEALED or "." not in module):
                    raise RuleViolation(f"{number}:{module}: not allowed in this exercise")
        elif event == "open" and _SEALED and owners and isinstance(args[0], str | bytes | os.PathLike):
            path = os.fsdecode(args[0])
            for candidate in (path, os.path.realpath(path)):  # a link of the student's own leads here too
                owner = next((o for o in owners if candidate.startswith(o[0])), None)
                if owner is not None:
                    raise RuleViolation(f"{owner[1]}:{owner[2]}: not allowed in this exercise")
            if not os.path.isabs(path):
                # A relative name may be resolved against a descriptor of any folder (os.open's
                # dir_fd), which the event does not carry: a relative name that names a banned
                # module's file or folder is refused wherever it points.
                parts = path.split(os.sep)
                for number, module in banned:
                    leaf = module.rpartition(".")[2]
                    if any(part == leaf or part.startswith(leaf + ".") for part in parts):
                        raise RuleViolation(f"{number}:{module}: not allowed in this exercise")

    sys.addaudithook(hook)


def seal_rules(rules: Sequence[Rule]) -> None:
    """Drop every banned module the frameworks imported, keeping no reference to any, and empty
    its namespace of what it defined and no other module took from it."""
    for _, module in banned_modules(rules):
        for name in [n for n in sys.modules if n == module or n.startswith(module + ".")]:
            dropped = sys.modules.pop(name)
            _strip_namespace(dropped)
            parent, _, child = name.rpartition(".")
            if parent in sys.modules and vars(sys.modules[parent]).get(child) is dropped:
                delattr(sys.modules[parent], child)
            del dropped
    _SEALED.append(True)
    gc.collect()


def _strip_namespace(dropped: ModuleType) -> None:
    """A framework may keep a few classes of a banned module (torch's higher-order ops keep two
    of torch.utils.checkpoint's), and their methods' ``__globals__`` is the module's namespace,
    which ``gc.get_objects()`` hands to anyone: so every definition of the module that no other
    loaded module holds (its ``checkpoint``, its ``CheckpointFunction``) leaves that namespace."""
    own = dropped.__name__
    namespace = vars(dropped)
    with warnings.catch_warnings():  # asking a deprecated object its module warns, on the student's stderr
        warnings.simplefilter("ignore")
        taken = {id(value) for other in list(sys.modules.values()) if other is not dropped
                 for value in list(getattr(other, "__dict__", {}).values())
                 if getattr(value, "__module__", None) == own}
    for key, value in list(namespace.items()):
        if getattr(value, "__module__", None) == own and id(value) not in taken:
            del namespace[key]


def _module_files(module: str) -> tuple[str, ...]:
    """Path prefixes of what loading ``module`` opens: its package folder, or its source and
    its compiled forms; found without importing anything."""
    top, *rest = module.split(".")
    try:
        spec = importlib.machinery.PathFinder.find_spec(top)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return ()
    if spec.submodule_search_locations:
        base = os.path.join(list(spec.submodule_search_locations)[0], *rest)
    elif spec.origin and not rest:
        base = os.path.splitext(spec.origin)[0]
    else:
        return ()
    found = []
    for folder in {base, os.path.realpath(base)}:
        found += [os.path.join(folder, ""), folder + ".",
                  os.path.join(os.path.dirname(folder), "__pycache__", os.path.basename(folder) + ".")]
    return tuple(found)
