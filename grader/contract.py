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

import dataclasses
import enum
import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any, TypedDict

# Of the result document; 2 added message_id and message_params to rows, and operator_log;
# 3 lets a message parameter be a text in every language of LANGUAGES (a check's own words),
# and adds fresh_imports.
FORMAT = 3

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


LANGUAGES = ("en", "zh-hans")  # every text a check writes for the student comes in each of these
MessageParams = dict[str, str | int | float | dict[str, str]]  # a dict: {language: text} for each of LANGUAGES


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
    message_id: str = ""  # names ``message`` for translation ("" when it has no fixed form)
    message_params: MessageParams = dataclasses.field(default_factory=dict)

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
        params = _typed(row, "message_params", dict, where)
        for name, value in params.items():
            if type(value) in (str, int, float):
                continue
            if not (isinstance(value, dict) and set(value) == set(LANGUAGES)
                    and all(type(text) is str for text in value.values())):
                raise ContractError(
                    f"{where}.message_params.{name}: must be a string, a number, "
                    f"or a text in each of {', '.join(LANGUAGES)}")
        return cls(
            name=_typed(row, "name", str, where),
            passed=_typed(row, "passed", bool, where),
            visible=_typed(row, "visible", bool, where),
            message=_typed(row, "message", str, where),
            points=_number(row, "points", where),
            max_points=_number(row, "max_points", where),
            kind=Kind(kind) if kind is not None else None,
            message_id=_typed(row, "message_id", str, where),
            message_params={k: dict(v) if isinstance(v, dict) else v for k, v in params.items()},
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


def cap_text(data: bytes, limit: int = FEEDBACK_BYTES) -> str:
    """Decode program output for feedback, keeping at most ``limit`` bytes and saying what was cut."""
    text = data[:limit].decode("utf-8", "replace")
    if len(data) > limit:
        text += f"\n[... {len(data) - limit} more bytes not shown]"
    return text


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
    process refuses to import a banned module (grader/harness/guard.py, while it runs)."""

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


def _number(data: Mapping[str, Any], key: str, where: str) -> float:
    value = data[key]
    if type(value) not in (int, float):
        raise ContractError(f"{where}.{key}: must be a number, got {type(value).__name__}")
    return float(value)
