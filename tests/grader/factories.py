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


# The [bank] table of a quiz bank made for a test; its questions follow.
QUIZ_BANK_HEADER = '''
[bank]
id = "tiny"
title.en = "Tiny"
title.zh-hans = "小题库"
description.en = "A bank for tests."
description.zh-hans = "测试用题库。"
'''
