"""What docker-compose.yml asks of the stack, read without starting it (test_compose.py runs it)."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from testbed.processes import ROOT


def compose() -> dict:
    return yaml.safe_load(Path(ROOT / "docker-compose.yml").read_text())


def test_every_sync_step_runs_before_the_web_serves():
    services = compose()["services"]
    command = services["setup"]["command"]
    steps = re.findall(r"manage\.py (sync_\w+)", command)
    commands = sorted(p.stem for p in (ROOT / "platform").glob("*/management/commands/sync_*.py"))
    assert sorted(steps) == commands == ["sync_content", "sync_lessons", "sync_quizzes"]
    assert command.index("migrate") < command.index("sync_content")
    # Once per `up`, not at every start of the web container (a restart after a crash).
    assert services["setup"]["restart"] == "no"
    assert services["web"]["depends_on"]["setup"] == {"condition": "service_completed_successfully"}
    assert services["web"]["command"].startswith("gunicorn ")


def test_only_workers_reach_the_docker_engine():
    services = compose()["services"]
    with_socket = sorted(name for name, service in services.items()
                         if any("docker.sock" in volume for volume in service.get("volumes", [])))
    assert with_socket == ["gpu-worker", "worker"]


def test_every_celery_process_logs_its_events():
    """Celery's own default level (WARNING) would drop the settings' one line per event, the
    "submission N: stored graded" an operator (and test_compose.py) reads."""
    services = compose()["services"]
    celery = {name: service["command"] for name, service in services.items() if "celery" in service.get("command", "")}
    assert sorted(celery) == ["gpu-worker", "scheduler", "worker"]
    assert all("--loglevel INFO" in command for command in celery.values()), celery


def test_the_cpu_worker_scales_with_the_queue_and_the_gpu_worker_with_its_gpus():
    """Celery's autoscaler per CPU host (grown while gradings wait, shrunk when idle); the GPU
    pool, a profile of its own, takes only the gpu queue, one grading per GPU."""
    services = compose()["services"]
    cpu = services["worker"]["command"]
    assert re.search(r"-Q cpu .*--autoscale \$\{WORKER_MAX_CONCURRENCY:-\d+\},\$\{WORKER_MIN_CONCURRENCY:-1\}", cpu)
    assert "--concurrency" not in cpu  # it would fix the pool's size
    gpu = services["gpu-worker"]
    assert gpu["profiles"] == ["gpu"] and "-Q gpu " in gpu["command"] and "--autoscale" not in gpu["command"]
    assert "--concurrency ${GPU_WORKER_CONCURRENCY:-1}" in gpu["command"]


def test_each_worker_s_health_check_pings_the_node_its_command_names():
    """`celery inspect ping -d NODE` answers only for the node named by --hostname: a check that
    pings another name calls a serving worker unhealthy forever."""
    services = compose()["services"]
    for name in ("worker", "gpu-worker"):
        node = re.search(r"--hostname (\w+)@%h", services[name]["command"]).group(1)
        check = " ".join(services[name]["healthcheck"]["test"])
        assert f"-d {node}@$$HOSTNAME " in check, (name, check)
