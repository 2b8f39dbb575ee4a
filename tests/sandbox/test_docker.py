"""The Docker backend: the container it asks for, GPUs, the janitor, the warm pool, engine faults."""
from __future__ import annotations

import dataclasses
import json
import os
import socket
import struct
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from sandbox import DEFAULT_IMAGE, Limits, RunOptions, SandboxUnavailable, get_sandbox
from sandbox.docker import (
    CAPABILITIES,
    DOCKER_MASKED_PATHS,
    EXPIRES_LABEL,
    LABEL,
    OWNER_LABEL,
    POOL_LABEL,
    DockerSandbox,
    container_config,
    masked_paths,
    owner_token,
    remove_orphans,
)
from sandbox.protocol import outcome_from_report
from tests.conftest import require
from tests.sandbox.backends import HOW_DOCKER, SMALL, backend_sandbox, docker_runtime_available

POOL_LIMITS = dataclasses.replace(SMALL, memory_mb=768, cpu_s=10.0, wall_s=15.0)


def _labelled_containers(label: str = LABEL):
    import docker

    return docker.from_env().containers.list(all=True, filters={"label": label})


@pytest.fixture
def docker_sandbox(requires) -> DockerSandbox:
    return backend_sandbox("docker-runc", requires)


def test_a_cpu_run_asks_for_a_hardened_container_and_no_gpu():
    config = container_config(DEFAULT_IMAGE, SMALL, RunOptions(), "runc")
    assert config["network_mode"] == "none"
    assert config["read_only"] is True
    assert config["cap_drop"] == ["ALL"] and sorted(config["cap_add"]) == sorted(CAPABILITIES)
    assert sorted(CAPABILITIES) == ["CHOWN", "KILL", "SETGID", "SETUID"]
    # gVisor's root also gives each untrusted family a PID namespace and a root of its own
    # (zygote.py): capabilities of gVisor's kernel, never the host's, dropped before untrusted code
    gvisor = container_config(DEFAULT_IMAGE, SMALL, RunOptions(), "runsc")
    assert sorted(gvisor["cap_add"]) == sorted([*CAPABILITIES, "SYS_ADMIN", "SYS_CHROOT"])
    assert config["security_opt"] == ["no-new-privileges"]
    assert config["mem_limit"] == config["memswap_limit"] == "256m"
    assert config["pids_limit"] == SMALL.pids
    assert config["nano_cpus"] == 1_000_000_000
    assert set(config["tmpfs"]) == {"/tmp", "/job", "/dev/mqueue"} and "size=16m" in config["tmpfs"]["/job"]
    assert "mode=0711" in config["tmpfs"]["/tmp"] and config["ipc_mode"] == "none"  # nothing every uid may write
    assert config["log_config"]["Type"] == "none"
    assert config["labels"][LABEL] == "1" and float(config["labels"][EXPIRES_LABEL]) > time.time()
    assert config["environment"] == {}
    assert "device_requests" not in config
    assert not any(key.startswith("NVIDIA") for key in config["environment"])
    assert "volumes" not in config and "mounts" not in config  # files travel by archive only
    # Naming hidden paths replaces Docker's list: ours keeps it and adds the host's activity
    # counters, per CPU too; gVisor's counters are its own (tests/security: the covert channel).
    assert set(DOCKER_MASKED_PATHS) < set(config["masked_paths"])
    assert {"/proc/stat", "/proc/loadavg", "/proc/pressure", "/sys/devices/system/cpu/cpu0/cpuidle"} <= set(
        masked_paths(cpus=["cpu0", "cpu1"]))
    assert "masked_paths" not in gvisor


def test_the_only_mount_is_the_lent_cgroup_read_write():
    lent = {"/sys/fs/cgroup/freezer/graphdojo-child-1/box": "/sandbox-cgroup/freezer"}
    config = container_config(DEFAULT_IMAGE, SMALL, RunOptions(), "runc", mounts=lent)
    assert [(m["Source"], m["Target"], m["Type"], m["ReadOnly"]) for m in config["mounts"]] == [
        ("/sys/fs/cgroup/freezer/graphdojo-child-1/box", "/sandbox-cgroup/freezer", "bind", False)]


def test_gpu_runs_ask_for_devices_by_count_or_id():
    by_count = container_config(DEFAULT_IMAGE, SMALL, RunOptions(gpus=2), "runc")["device_requests"]
    assert [(r["Count"], r["Capabilities"]) for r in by_count] == [(2, [["gpu"]])]
    by_id = container_config(DEFAULT_IMAGE, SMALL, RunOptions(gpus=("0", "GPU-3f2a")), "runc")["device_requests"]
    assert [(r["DeviceIDs"], r["Capabilities"]) for r in by_id] == [(["0", "GPU-3f2a"], [["gpu"]])]


def test_gvisor_caps_processes_inside_and_leaves_the_host_pids_for_its_sentry():
    config = container_config(DEFAULT_IMAGE, SMALL, RunOptions(), "runsc")
    assert config["runtime"] == "runsc"
    assert config["pids_limit"] > SMALL.pids


def test_memory_verdict_holds_when_the_oom_flag_is_not_set():
    """A SIGKILLed program whose peak reached the limit is a memory verdict even without OOMKilled."""
    report = {"exit_code": None, "signal": 9, "stopped_by": None, "wall_s": 0.3, "cpu_s": 0.2,
              "max_rss_bytes": 250 * 1024 * 1024, "oom_kills": 0, "stdout_truncated": False,
              "stderr_truncated": False, "files_truncated": False, "notes": [],
              "stdout_len": 0, "stderr_len": 0, "files_len": 0}
    header = json.dumps(report).encode()
    outcome = outcome_from_report(struct.pack(">I", len(header)) + header, SMALL, "docker-runc", oom_seen=False)
    assert outcome.status == "memory"
    small_peak = dict(report, max_rss_bytes=20 * 1024 * 1024)
    header = json.dumps(small_peak).encode()
    assert outcome_from_report(struct.pack(">I", len(header)) + header, SMALL, "docker-runc").status == "signal"


def test_an_engine_that_does_not_answer_is_unavailable():
    with pytest.raises(SandboxUnavailable, match="does not answer"):
        get_sandbox("docker", docker_base_url="unix:///nonexistent/docker.sock")


def test_a_missing_image_is_unavailable_and_says_how_to_build_it(docker_sandbox):
    with pytest.raises(SandboxUnavailable, match="make image"):
        get_sandbox("docker", image="graphdojo-sandbox:no-such-tag")


def test_auto_picks_docker_when_the_engine_and_image_are_there(docker_sandbox):
    assert get_sandbox("auto").name == "docker-runc"


def test_no_container_is_left_after_runs(docker_sandbox):
    run_label = f"graphdojo.test-run={uuid.uuid4().hex}"  # other workers may share this engine
    sandbox = get_sandbox("docker", labels=dict([run_label.split("=")]))
    sandbox.run({}, ["true"], SMALL)
    sandbox.run({}, ["sleep", "60"], dataclasses.replace(SMALL, wall_s=1.0))
    sandbox.run({}, ["python3", "-c", "x = bytearray(10**9)"], SMALL)
    assert _labelled_containers(run_label) == []


def test_the_janitor_removes_expired_orphans_only(docker_sandbox):
    client = docker_sandbox.client
    expired = client.containers.create(DEFAULT_IMAGE, labels={LABEL: "1", EXPIRES_LABEL: "1"})
    alive = client.containers.create(DEFAULT_IMAGE, labels={LABEL: "1", EXPIRES_LABEL: str(time.time() + 600)})
    try:
        assert docker_sandbox.janitor() >= 1
        remaining = {c.id for c in _labelled_containers()}
        assert expired.id not in remaining and alive.id in remaining
    finally:
        for container in (expired, alive):
            try:
                container.remove(force=True)
            except Exception:
                pass


def test_containers_of_a_dead_process_of_this_host_are_removed_at_once(docker_sandbox):
    """A killed worker's warm pool (issue 24, item 6): its containers name a process that is
    gone, and the next janitor (a starting worker's) removes them long before their expiry."""
    client = docker_sandbox.client
    doomed = subprocess.Popen(["sleep", "600"])
    dead_token = owner_token(doomed.pid)
    doomed.kill()
    doomed.wait()
    # Killed and not yet reaped, as a killed worker's pool child is until someone reaps it.
    zombie = subprocess.Popen(["sleep", "600"])
    zombie_token = owner_token(zombie.pid)
    zombie.kill()
    while Path(f"/proc/{zombie.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
        time.sleep(0.01)
    owners = {
        "dead": dead_token,
        "zombie": zombie_token,
        "reused pid": f"{socket.gethostname()}/{os.getpid()}/1",  # this pid, but another process's start time
        "alive": owner_token(),
        "other host": f"another-host-{uuid.uuid4().hex[:8]}/1/1",
    }
    later = str(time.time() + 600)
    made = {name: client.containers.create(DEFAULT_IMAGE, entrypoint=["sleep", "600"], labels={
        LABEL: "1", POOL_LABEL: "1", EXPIRES_LABEL: later, OWNER_LABEL: token}) for name, token in owners.items()}
    try:
        for container in made.values():
            container.start()
        assert remove_orphans() >= 3
        zombie.wait()
        remaining = {c.id for c in _labelled_containers()}
        assert {name for name, c in made.items() if c.id in remaining} == {"alive", "other host"}
    finally:
        for container in made.values():
            try:
                container.remove(force=True)
            except Exception:
                pass


def test_every_container_names_the_process_that_started_it(docker_sandbox):
    assert docker_sandbox.labels[OWNER_LABEL] == owner_token()
    assert owner_token().startswith(f"{socket.gethostname()}/{os.getpid()}/")


def test_the_janitor_removes_a_stopped_pooled_container_at_once(docker_sandbox):
    client = docker_sandbox.client
    stopped = client.containers.create(DEFAULT_IMAGE, entrypoint=["true"], labels={
        LABEL: "1", POOL_LABEL: "1", EXPIRES_LABEL: str(time.time() + 600)})
    try:
        stopped.start()
        stopped.wait(timeout=30)
        docker_sandbox.janitor()
        assert stopped.id not in {c.id for c in _labelled_containers()}
    finally:
        try:
            stopped.remove(force=True)
        except Exception:
            pass


@pytest.fixture(scope="module")
def warm_pool():
    """One pool of two warm containers for the module's pool tests: filling it (two containers
    importing torch) is most of what each of them cost."""
    require("Docker engine with the sandbox image", docker_runtime_available("runc"), HOW_DOCKER)
    sandbox = get_sandbox("docker", pool_size=2, pool_limits=POOL_LIMITS)
    yield sandbox
    sandbox.close()


@pytest.fixture
def pooled(warm_pool):
    """The module's pool, full again before each test (the one before took from it or killed it)."""
    assert warm_pool.pool.wait_ready(), "the warm pool never filled"
    return warm_pool


def test_warm_pool_runs_torch_without_paying_its_import(pooled):
    outcome = pooled.run({"main.py": b"import torch\nprint(torch.arange(4).sum().item())"},
                         ["python3", "main.py"], POOL_LIMITS)
    assert outcome.status == "ok", outcome
    assert outcome.stdout == b"6\n"
    assert "warm pool" in outcome.notes
    assert outcome.cpu_s < 1.0  # torch was imported before the job came


def test_each_pooled_container_serves_exactly_one_run(pooled):
    mark = "open('/tmp/mark', 'w').write('x'); import socket; print(socket.gethostname())"
    first = pooled.run({}, ["python3", "-c", mark], POOL_LIMITS)
    second = pooled.run({}, ["python3", "-c", "import os; print(os.path.exists('/tmp/mark'))"], POOL_LIMITS)
    assert "warm pool" in first.notes and "warm pool" in second.notes
    assert second.stdout == b"False\n"
    assert pooled.pool.wait_ready(), "the pool did not replace what was taken"


def test_pooled_runs_keep_every_status(pooled):
    def warm_run(argv: list[str], limits: Limits):
        # The pool holds two containers and this test takes three: on a busy machine the
        # refill may lag, and a cold start would not test what a pooled run keeps.
        assert pooled.pool.wait_ready(), "the warm pool did not refill"
        return pooled.run({}, argv, limits)

    slow = warm_run(["python3", "-c", "while True: pass"], dataclasses.replace(POOL_LIMITS, cpu_s=1.0))
    bomb = warm_run(["python3", "-c", "x = []\nwhile True: x.append(bytearray(10**7))"], POOL_LIMITS)
    failing = warm_run(["python3", "-c", "import sys; sys.exit('bad')"], POOL_LIMITS)
    assert (slow.status, bomb.status) == ("timeout", "memory")
    assert (failing.status, failing.exit_code, failing.stderr) == ("ok", 1, b"bad\n")
    assert all("warm pool" in o.notes for o in (slow, bomb, failing))


def test_a_dead_pooled_container_is_replaced_and_the_run_starts_cold(pooled):
    """What an engine restart does to the pool: every idle container dies."""
    for container in pooled.pool.idle_containers():
        container.kill()
    outcome = pooled.run({}, ["python3", "-c", "print('cold but fine')"], POOL_LIMITS)
    assert outcome.status == "ok" and outcome.stdout == b"cold but fine\n"  # cold, or the refill taken over
    assert pooled.pool.wait_ready(), "the pool did not refill after its containers died"
    assert "warm pool" in pooled.run({}, ["true"], POOL_LIMITS).notes


def test_a_run_that_finds_its_container_still_filling_takes_it_over(requires):
    """Starting cold beside a container that is importing torch would import it twice."""
    requires("Docker engine with the sandbox image", docker_runtime_available("runc"), HOW_DOCKER)
    sandbox = get_sandbox("docker", pool_size=1, pool_limits=POOL_LIMITS)
    try:
        deadline = time.monotonic() + 60
        while not sandbox.pool._filling and time.monotonic() < deadline:
            time.sleep(0.005)
        assert sandbox.pool._filling, "the pool never started filling"
        outcome = sandbox.run({}, ["python3", "-c", "import sys; print('torch' in sys.modules)"], POOL_LIMITS)
        assert outcome.status == "ok" and outcome.stdout == b"True\n", outcome
        assert "warm pool" in outcome.notes
    finally:
        sandbox.close()


def test_a_run_with_another_shape_starts_cold_and_gets_a_pool_of_its_own(pooled):
    other = dataclasses.replace(POOL_LIMITS, memory_mb=1024)
    assert "warm pool" not in pooled.run({}, ["true"], other).notes
    assert pooled.pool.wait_ready()
    assert "warm pool" in pooled.run({}, ["true"], other).notes


def test_gpu_runs_never_take_a_pooled_container(pooled):
    assert pooled.pool.take(POOL_LIMITS, RunOptions(gpus=1)) is None
