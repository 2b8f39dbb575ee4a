"""sandbox/bootstrap.py, run as every sandbox runs it: the one script (protocol.BOOTSTRAP_SOURCE)
that installs the runtime's modules and then the bootstrap, here without a sandbox."""
from __future__ import annotations

import ast
import subprocess
import sys

from sandbox import Limits
from sandbox.framing import READY
from sandbox.protocol import BOOTSTRAP_SOURCE, HERE, RUNTIME_MODULES, encode_job, outcome_from_report

LIMITS = Limits(cpu_s=5, wall_s=10, memory_mb=256, output_bytes=1000, files_bytes=100)


def test_the_bootstrap_and_the_host_speak_through_the_same_framing(tmp_path):
    """The one script a sandbox runs, here without a sandbox: READY, a job in, a report out."""
    job = encode_job({"main.py": b"import os\nprint('hi')\nopen('out/r.txt', 'w').write('42')\n"},
                     ["python3", "main.py"], LIMITS, {}, str(tmp_path / "job"))
    done = subprocess.run([sys.executable, "-I", "-c", BOOTSTRAP_SOURCE], input=job, capture_output=True, timeout=60)
    assert done.stdout.startswith(READY), done.stderr
    outcome = outcome_from_report(done.stdout[len(READY):], LIMITS, "test")
    assert (outcome.status, outcome.exit_code, outcome.stdout) == ("ok", 0, b"hi\n")
    assert outcome.files == {"out/r.txt": b"42"}


def test_the_one_script_installs_the_runtime_for_the_program_it_forks(tmp_path):
    """Nothing of the repository is inside a sandbox: a judge forked from the bootstrap imports
    the runtime the script installed (its modules' file names are the script's, not paths)."""
    names = [f"sandbox.{name}" for name in RUNTIME_MODULES]
    show = f"import sys, {', '.join(names)}; print([sys.modules[n].__file__ for n in {names!r}])"
    job = encode_job({}, ["python3", "-c", show], LIMITS, {}, str(tmp_path / "job"))
    done = subprocess.run([sys.executable, "-I", "-c", BOOTSTRAP_SOURCE], input=job, capture_output=True,
                          timeout=60, cwd=tmp_path)
    outcome = outcome_from_report(done.stdout[len(READY):], LIMITS, "test")
    assert (outcome.status, outcome.exit_code) == ("ok", 0), outcome
    assert outcome.stdout.decode().strip() == repr([f"sandbox/{name}.py" for name in RUNTIME_MODULES])


def test_the_runtime_imports_only_itself_and_the_standard_library():
    """Each runtime module travels in the script after the runtime modules it imports, and
    imports nothing else but the standard library (nothing else is inside a sandbox)."""
    installed: list[str] = []
    for name in [*RUNTIME_MODULES, "bootstrap"]:
        tree = ast.parse((HERE / f"{name}.py").read_text())
        for node in ast.walk(tree):
            modules = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                       else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for module in modules:
                if module.startswith("sandbox."):
                    assert module.removeprefix("sandbox.") in installed, (name, module)
                else:
                    assert module.split(".")[0] in sys.stdlib_module_names, (name, module)
        installed.append(name)
