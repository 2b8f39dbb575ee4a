"""The run-time half of an exercise's rules: a worker loaded with rules refuses the student's
imports of a banned module, however they are asked for, and lets the libraries import it.

Audit hooks cannot be removed, so each test runs its worker in a fresh interpreter that has
preloaded torch as the sandbox's zygote does (the banned module is already in sys.modules).
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from tests.grader.factories import REPO

RULES = [{"modules": ["torch.utils.checkpoint", "torch.autograd.functional"], "attributes": [], "calls": [],
          "reason": {"en": "do it yourself", "zh-hans": "自己动手"}}]

# Each function is one attack (or one thing that must keep working); the test calls each in turn.
PROGRAM = '''
import importlib
import torch

CHECKPOINT = ".".join(["torch", "utils", "check" + "point"])

def import_statement():
    import torch.utils.checkpoint
    return "imported"

def import_module():
    return importlib.import_module(CHECKPOINT).__name__

def dunder_import():
    return __import__(CHECKPOINT, fromlist=["checkpoint"]).__name__

def exec_a_string():
    exec("from torch.autograd import functional")
    return "imported"

def attribute_of_the_parent():
    return getattr(torch.utils, "check" + "point").__name__

def read_its_source():
    return len(open(torch.utils.__path__[0] + "/check" + "point.py").read())

def a_link_of_its_own():
    import os, tempfile
    link = os.path.join(tempfile.mkdtemp(), "c.py")
    os.symlink(torch.utils.__path__[0] + "/check" + "point.py", link)
    return len(open(link).read())

def code_under_a_library_file_name():
    exec(compile("import torch.utils.checkpoint", torch.__file__, "exec"))
    return "imported"

def other_modules_still_import():
    import torch.utils.data
    return torch.utils.data.__name__

def autograd_still_works():
    x = torch.ones(3, requires_grad=True)
    (x * x).sum().backward()
    return x.grad.tolist()

def a_library_may_import_it_for_itself():
    from torch._higher_order_ops.wrap import _always_prefer_recompute
    return str(_always_prefer_recompute(None, None))
'''

ATTACKS = ["import_statement", "import_module", "dunder_import", "exec_a_string", "attribute_of_the_parent",
           "read_its_source", "a_link_of_its_own", "code_under_a_library_file_name"]
KEPT = ["other_modules_still_import", "autograd_still_works", "a_library_may_import_it_for_itself"]

RUNNER = textwrap.dedent('''
    import json, os, sys, threading
    import numpy, torch  # preloaded, as the zygote does
    from grader.harness import wire
    from grader.harness.worker import Worker

    rules, program, calls = json.loads(sys.stdin.read())
    request_read, request_write = os.pipe()
    reply_read, reply_write = os.pipe()
    requests, replies = os.fdopen(request_write, "wb"), os.fdopen(reply_read, "rb")
    worker = Worker(os.fdopen(request_read, "rb"), os.fdopen(reply_write, "wb"), ["numpy", "torch"])
    threading.Thread(target=worker.serve, daemon=True).start()

    def ask(header, blobs=()):
        wire.write_frame(requests, header, list(blobs))
        reply, _ = wire.read_frame(replies)
        return {"ok": reply["ok"], "value": reply.get("value"), "error": reply.get("error")}

    results = {"load": ask({"op": "load", "filename": "submission.py", "module": "submission", "rules": rules},
                           [program.encode()])}
    for name in calls:
        results[name] = ask({"op": "call", "obj": 0, "name": name, "args": [], "kwargs": {}})
    print(json.dumps(results))
''')


def run_worker(rules: list[dict], program: str, calls: list[str]) -> dict:
    done = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps([rules, program, calls]),
                          capture_output=True, text=True, cwd=REPO, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def results():
    return run_worker(RULES, PROGRAM, ATTACKS + KEPT)


@pytest.mark.parametrize("attack", ATTACKS)
def test_the_students_process_refuses_every_way_of_importing_a_banned_module(results, attack):
    reply = results[attack]
    assert not reply["ok"], reply
    assert reply["error"]["type"] in ("RuleViolation", "AttributeError"), reply
    if reply["error"]["type"] == "RuleViolation":
        number, module = reply["error"]["message"].split(":")[:2]
        assert number in ("0", "-1") and module, reply


def test_the_banned_module_is_gone_from_its_parent(results):
    assert results["attribute_of_the_parent"]["error"]["type"] == "AttributeError"


@pytest.mark.parametrize("kept", KEPT)
def test_the_rest_of_the_library_keeps_working(results, kept):
    assert results["load"]["ok"], results["load"]
    assert results[kept]["ok"], results[kept]


def test_without_rules_nothing_is_refused():
    results = run_worker([], PROGRAM, ["import_statement", "import_module"])
    assert results["import_statement"] == {"ok": True, "value": "imported", "error": None}
    assert results["import_module"]["value"] == "torch.utils.checkpoint"


def test_a_module_the_sandbox_did_not_preload_is_refused_too():
    rules = [{"modules": ["json.tool"], "attributes": [], "calls": [], "reason": RULES[0]["reason"]}]
    program = "import importlib\n\ndef load():\n    return importlib.import_module('json.' + 'tool').__name__\n"
    results = run_worker(rules, program, ["load"])
    assert results["load"]["error"]["type"] == "RuleViolation", results
