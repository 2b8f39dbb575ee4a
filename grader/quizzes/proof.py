"""Proving "what does this code print?" answers by running the snippets in the sandbox.

Every snippet of a bank runs in one sandbox run: a small runner imports torch once, then
forks a fresh child per snippet (so no snippet sees another's state) and records what each
child printed. A stored answer that differs from the real output is a content error.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from concurrent.futures import Executor
from typing import Any

from grader.quizzes.answers import draw_params, instantiate, normalise_output
from grader.quizzes.loading import param_combinations
from grader.quizzes.model import Question
from sandbox import Limits, Sandbox

# Parameterised snippets are proven for this many distinct draws (or all, when fewer exist).
DRAWS_PER_QUESTION = 3
SNIPPET_TIMEOUT_S = 60

RUNNER = r'''
import json, os, signal, sys, tempfile, traceback
try:
    # Once here, so that each snippet's fork starts with them imported: the compiler stack
    # alone takes seconds to import, and many snippets compile or export.
    import torch  # noqa: F401
    import torch._dynamo, torch.export, torch.func  # noqa: F401,E401
except Exception:
    pass
names = sorted(os.listdir("snippets"), key=lambda n: int(n.split(".")[0]))
results = {}
for name in names:
    out_path, err_path = (os.path.join(tempfile.gettempdir(), f"{name}.{stream}") for stream in ("out", "err"))
    sys.stdout.flush(); sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.dup2(os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 1)
            os.dup2(os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 2)
            signal.alarm(TIMEOUT_S)
            with open(os.path.join("snippets", name)) as f:
                source = f.read()
            exec(compile(source, "snippet.py", "exec"), {"__name__": "__main__"})
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush(); sys.stderr.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    def tail(path, keep):
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return ""
        return data[-keep:].decode("utf-8", "replace")
    results[name] = {"exit": os.waitstatus_to_exitcode(status), "stdout": tail(out_path, 16384),
                     "stderr": tail(err_path, 2000)}
os.makedirs("out", exist_ok=True)
with open("out/results.json", "w") as f:
    json.dump(results, f)
'''.replace("TIMEOUT_S", str(SNIPPET_TIMEOUT_S))


@dataclasses.dataclass(frozen=True)
class Case:
    question: Question
    seed: int
    code: str
    expected: str  # normalised output the bank claims
    params: dict[str, Any]


def cases_for(question: Question) -> list[Case]:
    """The runs that prove one code_output question: one, or a few distinct draws."""
    if question.type != "code_output":
        return []
    cases: list[Case] = []
    seen: set[str] = set()
    total = sum(1 for _ in param_combinations(question)) if question.params else 1
    for seed in range(200):
        if len(cases) >= min(DRAWS_PER_QUESTION, total):
            break
        params = draw_params(question, seed)
        marker = json.dumps(params, sort_keys=True, default=str)
        if marker in seen:
            continue
        seen.add(marker)
        snapshot = instantiate(question, seed)
        answer = snapshot["key"]["answer"]
        if question.choices:
            answer = next(c["text"]["en"] for c in snapshot["choices"] if c["id"] == answer)
        cases.append(Case(question, seed, snapshot["code"], normalise_output(str(answer)), params))
    return cases


def prove(
    questions: Iterable[Question], sandbox: Sandbox, *, executor: Executor | None = None, runs: int = 1
) -> dict[str, list[str]]:
    """Run every code_output snippet; problems by question id (only questions with problems).

    The snippets are split over ``runs`` sandbox runs (each imports torch once), submitted to
    ``executor`` when one is given; the problems come out the same, in the same order.
    """
    cases = [case for question in questions for case in cases_for(question)]
    if not cases:
        return {}
    # Contiguous slices that never split a question, so its messages come out as from one run.
    size = -(-len(cases) // max(1, runs))
    slices: list[list[Case]] = [[]]
    for case in cases:
        if len(slices[-1]) >= size and case.question.id != slices[-1][-1].question.id:
            slices.append([])
        slices[-1].append(case)
    if executor is None:
        found = [_prove_in_one_run(part, sandbox) for part in slices]
    else:
        futures = [executor.submit(_prove_in_one_run, part, sandbox) for part in slices]
        found = [future.result() for future in futures]
    problems: dict[str, list[str]] = {}
    for part in found:
        for question_id, messages in part.items():
            problems.setdefault(question_id, []).extend(messages)
    return problems


def _prove_in_one_run(cases: list[Case], sandbox: Sandbox) -> dict[str, list[str]]:
    files = {"runner.py": RUNNER.encode()}
    for index, case in enumerate(cases):
        files[f"snippets/{index}.py"] = case.code.encode()
    limits = Limits(cpu_s=30 + 10 * len(cases), wall_s=60 + 15 * len(cases), memory_mb=2048, pids=64,
                    output_bytes=64 * 1024, files_bytes=4 * 1024 * 1024, tmpfs_mb=256)
    outcome = sandbox.run(files, ["python3", "runner.py"], limits)
    problems: dict[str, list[str]] = {}
    raw = outcome.files.get("out/results.json")
    if outcome.status != "ok" or raw is None:
        message = (f"the sandbox could not run the snippets ({outcome.status}, exit {outcome.exit_code}): "
                   f"{outcome.stderr[-500:].decode('utf-8', 'replace')} {' '.join(outcome.notes)}")
        return {case.question.id: [message] for case in cases}
    results = json.loads(raw)
    for index, case in enumerate(cases):
        result = results.get(f"{index}.py", {})
        where = f" with {case.params}" if case.params else ""
        if result.get("exit") != 0:
            problems.setdefault(case.question.id, []).append(
                f"the snippet{where} exits with {result.get('exit')}: {result.get('stderr', '')[-400:]}")
            continue
        actual = normalise_output(result.get("stdout", ""))
        if actual != case.expected:
            problems.setdefault(case.question.id, []).append(
                f"the snippet{where} prints {actual!r}, but the stored answer is {case.expected!r}")
    return problems
