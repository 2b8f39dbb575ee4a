"""`graphdojo submit SLUG FILE` against a real site and worker: progress, then the verdict."""
import subprocess
import sys
from pathlib import Path

import pytest
from rest_framework.authtoken.models import Token

from accounts.models import User
from catalog.services import content_sync

pytestmark = [pytest.mark.browser, pytest.mark.slow]
GRAPHDOJO = Path(sys.executable).parent / "graphdojo"
SLUG = "static-graph-executor"


def test_the_cli_submits_and_prints_the_verdict(live_server, celery_worker_process, content_dir, make_user):
    assert not content_sync(content_dir).errors
    token = Token.objects.create(user=make_user())
    done = subprocess.run(
        [str(GRAPHDOJO), "--url", live_server.url, "--token", token.key, "--lang", "zh-hans", "submit", SLUG,
         str(content_dir / "coding" / SLUG / "solution.py"), "--timeout", "180"],
        capture_output=True, text=True, timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "submitted #" in done.stderr and "/submissions/" in done.stderr  # and progress while it waited
    assert done.stdout.startswith("ACCEPTED: 15 分中得 15 分：全部检查通过。"), done.stdout
    assert "✔ 运行文章里的感知机例子  1/1" in done.stdout and "（隐藏）" in done.stdout
    assert User.objects.get(pk=token.user_id).submissions.get().verdict == "ACCEPTED"
