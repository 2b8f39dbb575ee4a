"""platform/ is a source root with no __init__.py, so `import platform` must still reach the
standard library everywhere our code runs (uuid, redis, celery and torch all call it)."""
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STDLIB = sysconfig.get_paths()["stdlib"]


def run(*argv: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "platform"), "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_under_the_test_runner():
    import platform

    assert platform.system() == os.uname().sysname
    assert Path(platform.__file__).parent == Path(STDLIB)
    assert not (ROOT / "platform" / "__init__.py").exists()


def test_under_manage_py():
    out = run(sys.executable, "manage.py", "shell", "-c",
              "import platform; print(platform.system()); print(platform.__file__)")
    system, module_file = out.split()[-2:]  # the shell may print its auto-imports first
    assert system == os.uname().sysname
    assert Path(module_file).parent == Path(STDLIB)


def test_under_celery():
    # `celery report` loads our Celery app (and Django through it) and prints platform.system()
    out = run(sys.executable, "-m", "celery", "-A", "config", "report")
    assert f"system:{os.uname().sysname}" in out
