"""A worker forked from the zygote finds nothing of the grading in its own process (issue 13).

The student's worker is a fork of a clean interpreter, not a fresh exec (but for an exercise
whose rules ban a module: then the fork execs a fresh interpreter, which holds even less), so
everything the zygote ever held is in the student's memory. The zygote is forked before the sandbox reads
its job, so the checks, the reference, the seed and the other worker's data must be
nowhere a submission can look: Python's objects and caches, its modules, /proc/self/maps
and environ, its descriptors, and the raw bytes of its own heap. A control string the
probe plants in its own memory must be found, so a blind probe fails the test.
"""
from __future__ import annotations

import json

from grader.contract import Kind
from grader.host import grade, load_exercise
from testbed.exercises import make_exercise

SEED = 8_675_309_123_457
CHECKS_TOKEN = "checks-token-" + "5150"
SOLUTION_TOKEN = "solution-token-" + "6060"
HIDDEN_INPUT = "hidden-input-" + "7070"

CHECKS = f"""\
from grader.harness import check, close

# {CHECKS_TOKEN}: this file is hidden
MARK = "{CHECKS_TOKEN}"

@check(points=1)
def adds_small_numbers(student, reference, rng):
    close(student.add(1, 2), reference.add(1, 2))

@check(points=1)
def echoes_a_hidden_input(student, reference, rng):
    close(student.echo("{HIDDEN_INPUT}"), reference.echo("{HIDDEN_INPUT}"))
"""
SOLUTION = f"""\
SECRET = "{SOLUTION_TOKEN}"  # the reference is hidden too
_kept = [SECRET * 3]

def add(a, b):
    return a + b

def echo(text):
    return text
"""
# Runs when the student's module loads, before any check: what it prints is shown.
PROBE = r'''
import gc, json, linecache, os, sys

def _probe(tokens):
    found, control = [], b"probe-" + b"control-" + b"9191"
    planted = bytearray(control * 4)  # in this process's heap: the scan must see it
    def look(where, text):
        # A token is never whole in this process (that would find itself): its two halves are
        # matched one after the other, and only the first half is ever reported.
        data = text if isinstance(text, bytes) else str(text).encode("utf-8", "replace")
        for head, tail in tokens:
            at = data.find(head)
            while at >= 0:
                if data.startswith(tail, at + len(head)):
                    found.append(f"{where}: {head.decode()}...")
                    break
                at = data.find(head, at + 1)
    objects = 0
    gc.unfreeze()  # the zygote froze what it held before forking: an attacker thaws it to see it all
    for obj in gc.get_objects():
        objects += 1
        try:
            if isinstance(obj, dict):
                for key, value in list(obj.items())[:5000]:
                    if isinstance(value, (str, bytes)):
                        look("gc dict", value)
                    if isinstance(key, str):
                        look("gc key", key)
            elif isinstance(obj, (list, tuple, set)):
                for item in list(obj)[:5000]:
                    if isinstance(item, (str, bytes)):
                        look("gc item", item)
            elif hasattr(obj, "__code__"):
                look("code", repr(obj.__code__.co_consts))
        except Exception:
            pass
    look("sys.modules", " ".join(sys.modules))
    look("module files", " ".join(str(getattr(m, "__file__", "")) for m in list(sys.modules.values())))
    look("linecache", " ".join(linecache.cache))
    look("importer cache", " ".join(sys.path_importer_cache))
    for name in ("checks", "solution", "grader.harness.judge", "grader.harness.programs"):
        if name in sys.modules:
            found.append(f"module {name} is loaded")
    with open("/proc/self/environ", "rb") as f:
        look("environ", f.read())
    look("os.environ", repr(dict(os.environ)))
    fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
    for fd in fds:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        look(f"fd {fd}", target)
        if any(part in target for part in ("checks.py", "solution.py", "manifest", "socket")):
            found.append(f"fd {fd} -> {target}")
    with open("/proc/self/maps") as f:
        maps = f.read()
    look("maps", maps)
    scanned, saw_control = 0, False
    with open("/proc/self/mem", "rb", buffering=0) as mem:
        for line in maps.splitlines():
            fields = line.split()
            path = fields[5] if len(fields) > 5 else ""
            if "r" not in fields[1] or (path and not path.startswith("[heap") and not path.startswith("[stack")):
                continue  # file-backed code and data come from the image, the same for every grading
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if end - start > 512 * 2**20:
                continue
            try:
                mem.seek(start)
                data = mem.read(end - start)
            except (OSError, ValueError, OverflowError):
                continue
            scanned += len(data)
            saw_control = saw_control or control in data
            look("memory", data)
    del planted
    print("PROBE " + json.dumps({"found": found, "objects": objects, "scanned": scanned,
                                 "control": saw_control, "fds": fds}), flush=True)

CANARY = "".join(["probe-can", "ary-31337"])  # whole in this process: the probe must find it
_probe([(head.encode(), tail.encode()) for head, tail in TOKENS + [("probe-can", "ary-31337")]])

def add(a, b):
    return a + b

def echo(text):
    return text
'''


def test_a_forked_worker_finds_nothing_of_the_grading(tmp_path, sandbox):  # noqa: F811
    spec = load_exercise(make_exercise(tmp_path / "exercise", checks=CHECKS, solution=SOLUTION))
    tokens = [CHECKS_TOKEN, SOLUTION_TOKEN, HIDDEN_INPUT, str(SEED)]
    # Each token in two halves, never joined in the probe: its own memory must not hold them whole.
    code = f"TOKENS = {[(t[:6], t[6:]) for t in tokens]!r}\n" + PROBE
    verdict = grade(spec, code, sandbox, seed=SEED)
    assert verdict.verdict == Kind.ACCEPTED, (verdict.verdict, verdict.stdout[-2000:], verdict.notes)
    report = json.loads(verdict.stdout.split("PROBE ", 1)[1].splitlines()[0])
    assert report["control"], "the probe did not see its own planted bytes: it is blind"
    assert report["objects"] > 10_000 and report["scanned"] > 10 * 2**20, report
    canary = [f for f in report["found"] if "probe-can" in f]
    assert any(f.startswith("gc") for f in canary) and any(f.startswith("memory") for f in canary), canary
    assert [f for f in report["found"] if f not in canary] == [], report["found"]
    assert report["fds"][:5] == [0, 1, 2, 3, 4] and len(report["fds"]) <= 6, report["fds"]
