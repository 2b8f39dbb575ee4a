"""The command-line client's own failures: each says what went wrong and exits 2."""

import socket
import subprocess
import sys
from pathlib import Path

GRAPHDOJO = Path(sys.executable).parent / "graphdojo"  # the console script `pip install` made


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(GRAPHDOJO), *args], capture_output=True, text=True, timeout=60, env=env)


def test_without_a_token_it_says_where_to_get_one():
    done = run("submit", "x", "y.py", env={"PATH": "/usr/bin"})
    assert done.returncode == 2 and "/api/token/" in done.stderr


def test_a_server_that_does_not_answer_is_named(tmp_path):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code = tmp_path / "solution.py"
    code.write_text("x = 1\n")
    done = run("--url", f"http://127.0.0.1:{port}", "--token", "t", "submit", "some-exercise", str(code))
    assert done.returncode == 2 and f"cannot reach http://127.0.0.1:{port}" in done.stderr


def test_a_missing_file_is_named(tmp_path):
    done = run("--token", "t", "submit", "some-exercise", str(tmp_path / "nope.py"))
    assert done.returncode == 2 and "cannot read" in done.stderr and "nope.py" in done.stderr
