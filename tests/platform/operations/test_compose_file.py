"""What docker-compose.yml asks of the stack, read without starting it (test_compose.py runs it)."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from testbed.processes import ROOT


def compose() -> dict:
    return yaml.safe_load(Path(ROOT / "docker-compose.yml").read_text())


def test_the_web_service_runs_every_sync_step_before_it_serves():
    command = compose()["services"]["web"]["command"]
    steps = re.findall(r"manage\.py (sync_\w+)", command)
    commands = sorted(p.stem for p in (ROOT / "platform").glob("*/management/commands/sync_*.py"))
    assert sorted(steps) == commands == ["sync_content", "sync_lessons", "sync_quizzes"]
    assert command.index("sync_lessons") < command.index("gunicorn")


def test_only_workers_reach_the_docker_engine():
    services = compose()["services"]
    with_socket = sorted(name for name, service in services.items()
                         if any("docker.sock" in volume for volume in service.get("volumes", [])))
    assert with_socket == ["gpu-worker", "worker"]
