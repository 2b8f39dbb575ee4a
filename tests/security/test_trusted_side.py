"""The trusted side out of the student's reach (issue 21; DESIGN.md "Security model").

Each test plants an attack that succeeded on main before the invariants held, on
docker-runc, docker-runsc and local:

1. untrusted code never holds privilege (the reference and every non-judge program too);
2. nothing writable is shared: the student's program finds exactly one place it may
   write, its own home, so nothing it plants can reach a trusted process (torch's
   compiler bisector running the student's code as root was the review's way in);
3. only the judge can write a verdict (a forged result file is refused);
4. hidden data never reaches code whose behaviour the student sees (the timed process
   has never been sent a hidden input).
"""
from __future__ import annotations

import json
import textwrap

from grader.contract import Kind
from grader.host import grade, load_exercise
from sandbox import Limits
from testbed.exercises import TOML, make_exercise

# The reference compiles on every call, as dynamic-shape-recompiles' does; the student's
# answers are wrong (add subtracts), so an honest judge can only say WRONG_ANSWER.
COMPILING_SOLUTION = """\
import torch

def _add(a, b):
    return a + b

def add(a, b):
    return float(torch.compile(_add, backend="eager")(torch.tensor(a), torch.tensor(b)))
"""
TORCH_TOML = TOML.replace("memory_mb = 256", "memory_mb = 1024").replace("wall_s = 10", "wall_s = 60").replace(
    "cpu_s = 5", "cpu_s = 30")

# Forge a full score as root: write the result file the host reads, then kill the judge
# before it can write its own. Runs wherever torch evaluates the planted config value.
FORGE = """\
import json, os, signal
rows = [dict(name=n, passed=True, visible=True, message="", points=p, max_points=p, kind=None,
             message_id="", message_params={}) for n, p in (("adds_small_numbers", 1.0), ("adds_random_numbers", 2.0))]
doc = dict(format=3, checks=rows, perf=None, stdout="", stderr="", notes=[], isolated=True,
           internal_error=None, operator_log=[], fresh_imports=[])
for out in ("/job/out", os.path.join(os.environ.get("GD_JOB", "/job"), "out")):
    try:
        with open(os.path.join(out, "result.json"), "w") as f:
            f.write(json.dumps(doc))
    except OSError:
        pass
for pid in os.listdir("/proc"):  # the judge (and the zygote): every root process but init and us
    try:
        if pid.isdigit() and int(pid) not in (1, os.getpid()) and os.stat(f"/proc/{pid}").st_uid == 0:
            os.kill(int(pid), signal.SIGKILL)
    except OSError:
        pass
"""

PLANTER = f"""\
import getpass, os, tempfile

PAYLOAD = {FORGE!r}
planted = []

def plant(cache):
    try:
        bisect = os.path.join(cache, "bisect")
        os.makedirs(os.path.join(bisect, "inductor"), exist_ok=True)
        with open(os.path.join(bisect, "bisect_status.txt"), "w") as f:
            f.write("backend=inductor\\nsubsystem=pwn\\n")
        with open(os.path.join(bisect, "inductor", "pwn_config.txt"), "w") as f:
            f.write("config_name=exec(" + repr(PAYLOAD) + ")\\n")
        for folder, _, _ in os.walk(cache):
            os.chmod(folder, 0o777)
        planted.append(cache)
    except OSError:
        pass

# Every inductor cache a trusted process might use: by user name under each temp folder,
# and under the student's own home (in case a trusted process shares it).
for tmp in {{"/tmp", tempfile.gettempdir(), os.environ.get("HOME", "/tmp")}}:
    for user in ("root", "reference", "student", "nobody", "judge"):
        plant(os.path.join(tmp, "torchinductor_" + user))

def add(a, b):
    return a - b
"""


def test_a_cache_planted_by_the_student_never_runs_in_a_trusted_process(tmp_path, sandbox):
    exercise = load_exercise(make_exercise(tmp_path / "exercise", toml=TORCH_TOML, solution=COMPILING_SOLUTION))
    verdict = grade(exercise, PLANTER, sandbox)
    assert verdict.verdict == Kind.WRONG_ANSWER, (verdict.verdict, verdict.notes, verdict.operator_log[-1:])
    assert verdict.score == 0


# Walk the whole tree as the student's worker and list every folder it could create a
# file in and every regular file it could write (outside /proc and /sys, which are
# per-process views and read-only folders).
WALKER = """\
import json, os, stat

def writable_places():
    found = []
    for top, folders, files in os.walk("/", topdown=True):
        if top in ("/proc", "/sys") or top.startswith(("/proc/", "/sys/")):
            folders[:] = []
            continue
        if os.access(top, os.W_OK | os.X_OK):
            found.append(top)
        for name in files:
            path = os.path.join(top, name)
            try:
                if stat.S_ISREG(os.lstat(path).st_mode) and os.access(path, os.W_OK):
                    found.append(path)
            except OSError:
                pass
    return found

print(json.dumps({"home": os.environ.get("HOME"), "cwd": os.getcwd(), "writable": writable_places()}))

def add(a, b):
    return a + b
"""


def test_the_students_program_can_write_only_in_its_own_home(tmp_path, sandbox):
    # Walking every file (the local backend shows the host's /usr, torch included) takes a
    # while on a busy machine: roomy limits, so that the walk, not the clock, decides.
    roomy = TOML.replace("cpu_s = 5\nwall_s = 10", "cpu_s = 60\nwall_s = 120")
    assert roomy != TOML
    exercise = load_exercise(make_exercise(tmp_path / "exercise", toml=roomy))
    verdict = grade(exercise, WALKER, sandbox)
    assert verdict.verdict == Kind.ACCEPTED, (verdict.verdict, verdict.notes)
    seen = json.loads(verdict.stdout.splitlines()[0])
    home = seen["home"]
    assert home and home != "/tmp" and os_path_is_private(home), seen
    outside = [p for p in seen["writable"] if p != home and not p.startswith(home + "/")]
    assert outside == [], outside


def os_path_is_private(path: str) -> bool:
    """A home of its own: one folder below /tmp, never /tmp itself nor a shared folder."""
    parts = path.strip("/").split("/")
    return len(parts) == 2 and parts[0] == "tmp"


# The reference solution and the checks report what the reference process holds.
IDENTITY_SOLUTION = """\
import os

def add(a, b):
    return a + b

def identity():
    with open("/proc/self/status") as f:
        status = dict(line.split(":", 1) for line in f if ":" in line)
    return {"uid": os.getuid(), "euid": os.geteuid(), "caps": status["CapEff"].strip(),
            "can_read_checks": os.access("/job/exercise/checks.py", os.R_OK)}
"""
IDENTITY_CHECKS = """\
from grader.harness import check, close, fail

@check(points=1)
def adds_small_numbers(student, reference, rng):
    close(student.add(2, 3), reference.add(2, 3))

@check(points=2)
def the_reference_holds_no_privilege(student, reference, rng):
    who = reference.identity()
    if who["uid"] == 0 or who["euid"] == 0 or int(who["caps"], 16) != 0 or who["can_read_checks"]:
        fail({"en": "the reference runs with privilege: {who}", "zh-hans": "参考解带着特权运行：{who}"}, who=str(who))
"""


def test_the_reference_runs_without_root_and_cannot_read_the_hidden_files(tmp_path, sandbox):
    exercise = load_exercise(make_exercise(tmp_path / "exercise", checks=IDENTITY_CHECKS,
                                           solution=IDENTITY_SOLUTION))
    verdict = grade(exercise, "def add(a, b):\n    return a + b\n", sandbox)
    assert verdict.verdict == Kind.ACCEPTED, [(c.name, c.message) for c in verdict.checks] or verdict.notes


# A program that is not a judge (the lessons playground, a snippet proof) is untrusted.
PRIVILEGE_PROBE = """\
import json, os
with open("/proc/self/status") as f:
    status = dict(line.split(":", 1) for line in f if ":" in line)
uid_at_start = os.getuid()
tried = {}
for uid in (0, 65534, 200001):
    try:
        os.setresuid(uid, uid, uid)
        tried[uid] = "became"
    except OSError as error:
        tried[uid] = error.errno
print(json.dumps({"uid": uid_at_start, "caps": status["CapEff"].strip(), "setresuid": tried,
                  "tmp_writable": os.access("/tmp", os.W_OK)}))
"""


def test_a_program_that_is_not_the_judge_holds_no_privilege(sandbox):
    outcome = sandbox.run({"main.py": PRIVILEGE_PROBE.encode()}, ["python3", "main.py"],
                          Limits(cpu_s=5, wall_s=20, memory_mb=256))
    assert (outcome.status, outcome.exit_code) == ("ok", 0), outcome.stderr[-2000:]
    seen = json.loads(outcome.stdout)
    assert seen["uid"] != 0 and int(seen["caps"], 16) == 0, seen
    assert all(result != "became" for result in seen["setresuid"].values()), seen
    assert seen["tmp_writable"] is False, seen


# The hidden check hands the student a secret; the performance case then times the
# student. If the timed process could have seen the secret, its answers change (an
# output stands in for a timing here, so that the test cannot depend on the machine's load).
SECRET = 7_654_321
LEAK_CHECKS = f"""\
from grader.harness import Race, check, close, perf

@check(points=1)
def adds_small_numbers(student, reference, rng):
    close(student.add(2, 3), reference.add(2, 3))

@check(points=1)
def keeps_a_hidden_number(student, reference, rng):
    close(student.keep({SECRET}), reference.keep({SECRET}))

@perf(points=1)
def doubles(student, reference, rng):
    return Race(student=student.double, reference=reference.double, inputs=lambda rng: (int(rng.integers(1000)),))
"""
LEAK_SOLUTION = """\
def add(a, b):
    return a + b

def keep(n):
    return n

def double(n):
    return 2 * n
"""
LEAK_TOML = TOML + """
[perf.doubles]
baseline = "reference"
at_most = 1000.0
budget_s = 1
"""
LEAKER = """\
import os, glob
_seen = []

def _carried():
    # What an earlier process of this grading may have left: a global, or a file anywhere it could write.
    for path in [os.path.join(os.environ.get("HOME", "/tmp"), "seen")] + glob.glob("/tmp/*/seen") + ["/tmp/seen"]:
        try:
            with open(path) as f:
                return True
        except OSError:
            pass
    return bool(_seen)

def add(a, b):
    return a + b

def keep(n):
    _seen.append(n)
    for path in (os.path.join(os.environ.get("HOME", "/tmp"), "seen"), "/tmp/seen"):
        try:
            with open(path, "w") as f:
                f.write(str(n))
            os.chmod(path, 0o666)
        except OSError:
            pass
    return n

def double(n):
    return 2 * n + (1 if _carried() else 0)
"""


def test_the_timed_process_has_never_seen_a_hidden_input(tmp_path, sandbox):
    exercise = load_exercise(make_exercise(tmp_path / "exercise", toml=LEAK_TOML, checks=LEAK_CHECKS,
                                           solution=LEAK_SOLUTION))
    verdict = grade(exercise, textwrap.dedent(LEAKER), sandbox)
    assert verdict.verdict == Kind.ACCEPTED, [(c.name, c.kind, c.message[:120]) for c in verdict.checks]
