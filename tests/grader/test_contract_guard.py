"""The run-time half of an exercise's rules: the student's process never holds a banned module.

Each test runs its worker in a fresh interpreter started as the student's worker of an
exercise with rules is (grader/harness/programs.py RULED_BOOT): the rules installed first,
then the frameworks (``import torch`` imports torch.utils.checkpoint and
torch.autograd.functional for itself), then the seal that drops them, then the worker. Audit
hooks cannot be removed, which is one more reason for a fresh interpreter per test.
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

def a_library_imports_it_for_the_student():
    from torch._higher_order_ops.wrap import _always_prefer_recompute
    return str(_always_prefer_recompute(None, None))

def a_harness_function_imports_it_for_the_student():
    from grader.harness import wire
    return wire.compile_function("lambda: __import__(" + repr(CHECKPOINT) + ")")().__name__

def found_among_the_live_objects():
    import gc, types
    names = [CHECKPOINT, "torch.autograd.func" + "tional"]
    found = [o for o in gc.get_objects() if isinstance(o, types.ModuleType) and getattr(o, "__name__", "") in names]
    return [m.__name__ for m in found]

def other_modules_still_import():
    import torch.utils.data
    return torch.utils.data.__name__

def autograd_still_works():
    x = torch.ones(3, requires_grad=True)
    (x * x).sum().backward()
    return x.grad.tolist()
'''

ATTACKS = ["import_statement", "import_module", "dunder_import", "exec_a_string", "attribute_of_the_parent",
           "read_its_source", "a_link_of_its_own", "code_under_a_library_file_name",
           "a_library_imports_it_for_the_student", "a_harness_function_imports_it_for_the_student"]
KEPT = ["other_modules_still_import", "autograd_still_works", "found_among_the_live_objects"]

RUNNER = textwrap.dedent('''
    import json, os, sys, threading
    from grader import contract

    rules, program, calls = json.loads(sys.stdin.read())
    contract.start_ruled(rules, ["numpy", "torch"])  # as RULED_BOOT does, before the harness is imported
    from grader.harness import wire
    from grader.harness.worker import Worker

    request_read, request_write = os.pipe()
    reply_read, reply_write = os.pipe()
    requests, replies = os.fdopen(request_write, "wb"), os.fdopen(reply_read, "rb")
    worker = Worker(os.fdopen(request_read, "rb"), os.fdopen(reply_write, "wb"), ["numpy", "torch"])
    threading.Thread(target=worker.serve, daemon=True).start()

    def ask(header, blobs=()):
        wire.write_frame(requests, header, list(blobs))
        reply, _ = wire.read_frame(replies)
        return {"ok": reply["ok"], "value": reply.get("value"), "error": reply.get("error")}

    results = {"load": ask({"op": "load", "filename": "submission.py", "module": "submission"},
                           [program.encode()])}
    for name in calls:
        results[name] = ask({"op": "call", "obj": 0, "name": name, "args": [], "kwargs": {}})
    print(json.dumps(results))
''')


def run_worker(rules: list[dict], program: str, calls: list[str]) -> dict:
    isolated = [sys.executable, "-I", "-c", "import sys; sys.path.insert(0, '.');" + RUNNER]  # -I as RULED_BOOT
    done = subprocess.run(isolated, input=json.dumps([rules, program, calls]),
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


def test_no_banned_module_is_left_among_the_live_objects(results):
    """torch imported both for itself; the seal dropped them and nothing keeps them alive."""
    assert results["found_among_the_live_objects"]["value"] == [], results["found_among_the_live_objects"]


def test_a_banned_top_level_module_is_never_loaded():
    rules = [{"modules": ["numpy"], "attributes": [], "calls": [], "reason": RULES[0]["reason"]}]
    program = ("import sys\nfrom grader.harness import wire\n\n"
               "def held():\n    return ['num' + 'py' in sys.modules, hasattr(wire, 'np')]\n")
    results = run_worker(rules, program, ["held"])
    assert results["held"]["value"] == [False, False], results


def test_without_rules_nothing_is_refused():
    results = run_worker([], PROGRAM, ["import_statement", "import_module"])
    assert results["import_statement"] == {"ok": True, "value": "imported", "error": None}
    assert results["import_module"]["value"] == "torch.utils.checkpoint"


def test_a_module_the_sandbox_did_not_preload_is_refused_too():
    rules = [{"modules": ["json.tool"], "attributes": [], "calls": [], "reason": RULES[0]["reason"]}]
    program = "import importlib\n\ndef load():\n    return importlib.import_module('json.' + 'tool').__name__\n"
    results = run_worker(rules, program, ["load"])
    assert results["load"]["error"]["type"] == "RuleViolation", results
