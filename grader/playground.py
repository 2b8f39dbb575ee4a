"""Run (not grade) a short program in a sandbox: what the lessons' playground and the lesson
validator both use, so a code block's claimed output is proven exactly where students run it.
It sits below grader.host and grader.lessons, which both use it (the host re-exports it).

    result = run_program("print(1 + 1)", sandbox)
    result.stdout, result.stderr, result.exit_code, result.status, result.wall_s

The program can import ``grader.engines`` (shipped with it), numpy and torch.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from sandbox.base import Limits, Sandbox

GRADER_DIR = Path(__file__).resolve().parent  # grader/, whose engines the program may import
MAX_CODE_BYTES = 16 * 1024
PLAYGROUND_LIMITS = Limits(cpu_s=10, wall_s=30, memory_mb=1024, pids=32, output_bytes=16 * 1024,
                           files_bytes=64 * 1024, tmpfs_mb=64)


@dataclasses.dataclass(frozen=True)
class RunResult:
    status: str          # the sandbox's: "ok", "timeout", "memory", "output_limit", "signal", "sandbox_error"
    exit_code: int | None
    stdout: str
    stderr: str
    truncated: bool
    wall_s: float
    backend: str

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.exit_code == 0

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "ok": self.ok}


def engine_files() -> dict[str, bytes]:
    """``grader/engines`` as sandbox files, so a program can ``from grader.engines import ...``."""
    files = {f"grader/{path.relative_to(GRADER_DIR).as_posix()}": path.read_bytes()
             for path in sorted((GRADER_DIR / "engines").rglob("*.py")) if "__pycache__" not in path.parts}
    files["grader/__init__.py"] = (GRADER_DIR / "__init__.py").read_bytes()
    return files


def run_program(code: str, sandbox: Sandbox, limits: Limits = PLAYGROUND_LIMITS) -> RunResult:
    """Run ``code`` as ``main.py``; raises ValueError for oversized code, SandboxUnavailable for faults."""
    data = code.encode("utf-8", "surrogatepass")
    if len(data) > MAX_CODE_BYTES:
        raise ValueError(f"the program is {len(data)} bytes; the playground runs at most {MAX_CODE_BYTES}")
    outcome = sandbox.run({**engine_files(), "main.py": data}, ["python3", "main.py"], limits)
    return RunResult(
        status=outcome.status, exit_code=outcome.exit_code,
        stdout=outcome.stdout.decode("utf-8", "replace"), stderr=outcome.stderr.decode("utf-8", "replace"),
        truncated=outcome.stdout_truncated or outcome.stderr_truncated, wall_s=round(outcome.wall_s, 3),
        backend=outcome.backend,
    )


FLOW_RUNNER = '''
import json, os, traceback
from grader.lessons.traces import compile_flow
with open("program.py", encoding="utf-8") as f:
    source = f.read()
try:
    result = {"ok": True, "flow": compile_flow(source)}
except BaseException as error:
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == "program.py"]
    where = f" (line {frames[-1].lineno})" if frames else ""
    result = {"ok": False, "error": f"{type(error).__name__}{where}: {error}"[:2000]}
os.makedirs("out", exist_ok=True)
with open("out/flow.json", "w") as f:
    json.dump(result, f)
'''
FLOW_MAX_BYTES = 1 << 20


def run_compile_flow(source: str, sandbox: Sandbox, limits: Limits = PLAYGROUND_LIMITS) -> dict[str, Any]:
    """``grader.lessons.traces.compile_flow(source)`` inside the sandbox: ``{"ok", "flow" | "error"}``."""
    files = {**engine_files(), "main.py": FLOW_RUNNER.encode(), "program.py": source.encode("utf-8", "surrogatepass"),
             "grader/lessons/__init__.py": b"",
             "grader/lessons/traces.py": (GRADER_DIR / "lessons" / "traces.py").read_bytes()}
    outcome = sandbox.run(files, ["python3", "main.py"], dataclasses.replace(limits, files_bytes=FLOW_MAX_BYTES))
    raw = outcome.files.get("out/flow.json")
    if outcome.status != "ok" or raw is None:
        reason = {"timeout": "it ran out of time", "memory": "it ran out of memory"}.get(outcome.status, outcome.status)
        return {"ok": False, "error": f"the program did not finish ({reason}): "
                                      f"{outcome.stderr.decode('utf-8', 'replace')[-500:]}"}
    try:
        result = json.loads(raw)
    except ValueError:
        return {"ok": False, "error": "the sandbox returned an unreadable result"}
    if not isinstance(result, dict) or not isinstance(result.get("ok"), bool):
        return {"ok": False, "error": "the sandbox returned an unreadable result"}
    return result
