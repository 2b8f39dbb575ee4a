"""python -m grader grade: the contract instructors and CI rely on."""
from __future__ import annotations

import json
import subprocess
import sys

from testbed.exercises import make_exercise
from tests.grader.factories import REPO, STATIC_GRAPH, grading_sandbox


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", "grade", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_json_on_a_correct_submission(requires):
    grading_sandbox("local", requires)
    result = run_cli(STATIC_GRAPH, STATIC_GRAPH / "solution.py", "--backend", "local", "--json")
    assert result.returncode == 0, result.stderr
    verdict = json.loads(result.stdout)  # exactly one JSON object, nothing else
    assert verdict["verdict"] == "ACCEPTED" and verdict["score"] == 1.0 and verdict["backend"] == "local"
    assert all({"name", "passed", "visible", "message"} <= set(c) for c in verdict["checks"])
    assert set(verdict["usage"]) == {"wall_s", "cpu_s", "max_rss_bytes", "fresh_imports"} and verdict["perf"]["cases"]


def test_a_wrong_submission_still_exits_zero_and_reads_well(requires):
    grading_sandbox("local", requires)
    result = run_cli(STATIC_GRAPH, STATIC_GRAPH / "mutants" / "seed_demo.py", "--backend", "local", "--seed", "1")
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("RUNTIME_ERROR  score 0.")
    assert "FAIL  follows_dependencies_not_insertion_order" in result.stdout and "KeyError: 'z'" in result.stdout


def test_an_invalid_exercise_is_a_clear_error(tmp_path):
    (tmp_path / "exercise.toml").write_text("id = 1\n")
    result = run_cli(tmp_path, STATIC_GRAPH / "solution.py")
    assert result.returncode == 2 and "statement.md: missing" in result.stderr


def test_runtime_chooses_gvisor_for_the_docker_backend(requires, tmp_path):
    grading_sandbox("docker-runsc", requires)
    folder = make_exercise(tmp_path / "exercise")
    result = run_cli(folder, folder / "solution.py", "--backend", "docker", "--runtime", "runsc", "--json")
    assert result.returncode == 0, result.stderr
    verdict = json.loads(result.stdout)
    assert verdict["verdict"] == "ACCEPTED" and verdict["backend"] == "docker-runsc"


def test_runtime_without_docker_is_a_clear_error():
    result = run_cli(STATIC_GRAPH, STATIC_GRAPH / "solution.py", "--backend", "local", "--runtime", "runsc")
    assert result.returncode == 2 and "--runtime chooses a Docker runtime" in result.stderr


def test_an_option_the_backend_does_not_take_is_a_clear_error():
    result = run_cli(STATIC_GRAPH, STATIC_GRAPH / "solution.py", "--backend", "docker", "--allow-unisolated")
    assert result.returncode == 2, result.stderr
    assert "the docker sandbox has no option 'allow_unisolated'" in result.stderr and "Traceback" not in result.stderr
