"""Factories for grader tests: exercise folders on disk, and the real sandbox backends."""
from __future__ import annotations

from pathlib import Path

from sandbox import Sandbox
from tests.sandbox.backends import backend_sandbox

REPO = Path(__file__).resolve().parents[2]
STATIC_GRAPH = REPO / "exercises" / "coding" / "static-graph-executor"
GRADING_BACKENDS = ["local", "docker-runc"]

def grading_sandbox(name: str, requires) -> Sandbox:
    return backend_sandbox(name, requires)
