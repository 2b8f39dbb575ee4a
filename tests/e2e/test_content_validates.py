"""Every exercise and quiz bank in the repository is proven in the Docker sandbox: each
solution ACCEPTED, each starter not, each mutant its declared verdict, each snippet's
printed answer as stored. This is what CI's content check is."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader.content_root import exercise_folders
from sandbox import docker_available

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def test_all_content_validates_on_docker(requires):
    requires("Docker engine and sandbox image", docker_available(), "run sandbox/image/ci-setup.sh and `make image`")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "platform"), "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    done = subprocess.run(
        # As many gradings at once as the cores hold, each with a warm container (the defaults).
        [sys.executable, "manage.py", "validate_content", "--backend", "docker", "--json"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200,
    )
    report = json.loads(done.stdout)
    assert done.returncode == 0, json.dumps(report, indent=1)[-6000:]
    in_repository = [folder.name for folder in exercise_folders(ROOT / "exercises")]
    by_slug = {exercise["slug"]: exercise for exercise in report["exercises"]}
    assert sorted(by_slug) == in_repository
    proven = [slug for slug, exercise in by_slug.items() if exercise["ok"] and not exercise["skipped"]]
    assert len(proven) >= 12, {slug: e["skipped"] for slug, e in by_slug.items() if e["skipped"]}
    for slug in proven:  # the solution, the starter and at least one mutant were really graded
        programs = {run["program"] for run in by_slug[slug]["runs"]}
        assert {"solution", "starter"} <= programs and any(p.startswith("mutant:") for p in programs), slug
    assert report["quizzes"] and not any(report["quizzes"].values()), report["quizzes"]
    assert report["lessons"] and not any(report["lessons"].values()), report["lessons"]   # every code block run
    for slug, exercise in sorted(by_slug.items()):
        print(f"{slug:28} {'skipped: ' + exercise['skipped'] if exercise['skipped'] else 'proven'} "
              f"({len(exercise['runs'])} programs, {exercise['seconds']} s)")
