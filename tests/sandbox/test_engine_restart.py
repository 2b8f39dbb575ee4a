"""The warm pool through a real Docker engine restart: dockerd stopped and started again,
every pooled container gone with it. Runs in CI; on a developer's machine only when asked
(GRAPHDOJO_TEST_ENGINE_RESTART=1), since it stops the engine other work may be using."""
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from sandbox import Limits, docker_available, get_sandbox

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
LIMITS = Limits(cpu_s=5, wall_s=10, memory_mb=256, pids=64)
PID_FILE = Path("/var/run/docker.pid")


def restart_engine() -> None:
    pid = int(PID_FILE.read_text())
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while Path(f"/proc/{pid}").exists():
        assert time.monotonic() < deadline, "dockerd did not stop"
        time.sleep(0.2)
    subprocess.run(["bash", str(ROOT / "sandbox/image/ci-setup.sh")], check=True, timeout=180)


def test_the_warm_pool_survives_an_engine_restart(requires):
    if os.environ.get("CI") != "true" and os.environ.get("GRAPHDOJO_TEST_ENGINE_RESTART") != "1":
        pytest.skip("restarts dockerd: runs in CI, or with GRAPHDOJO_TEST_ENGINE_RESTART=1")
    requires("Docker engine and sandbox image", docker_available() and PID_FILE.exists(),
             "run sandbox/image/ci-setup.sh and `make image`")
    sandbox = get_sandbox("docker", pool_size=1, pool_limits=LIMITS)
    try:
        assert sandbox.pool.wait_ready(), "the warm pool never filled"
        restart_engine()

        after = sandbox.run({}, ["python3", "-c", "print('after the restart')"], LIMITS)
        assert (after.status, after.stdout) == ("ok", b"after the restart\n"), after
        assert "warm pool" not in after.notes  # its pooled container died with the engine

        assert sandbox.pool.wait_ready(), "the pool did not refill once the engine was back"
        warm = sandbox.run({}, ["python3", "-c", "print('warm again')"], LIMITS)
        assert (warm.status, warm.stdout) == ("ok", b"warm again\n") and "warm pool" in warm.notes
    finally:
        sandbox.close()
