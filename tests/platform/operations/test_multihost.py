"""Scale-out: Celery workers on two "hosts" (network namespaces on a virtual network) share
PostgreSQL and the broker; every submission is graded exactly once, and each host's share
is reported (the line starting MULTIHOST; run with -s)."""
from __future__ import annotations

import re
import time
from collections import Counter

import pytest

from testbed.processes import VirtualHosts, Worker
from testbed.site import GradingSite

pytestmark = [pytest.mark.slow]
# Enough that both hosts take a share and a double grading would show; throughput is
# bench/'s to measure (bench/results/grading.md), not this test's (200 here took 281 s of the suite).
SUBMISSIONS = 60


def test_workers_on_two_hosts_grade_every_submission_once(tiny_exercises, tmp_path, settings, requires,
                                                         django_user_model):
    database = settings.DATABASES["default"]
    requires("PostgreSQL", database["ENGINE"].endswith("postgresql"), "set DATABASE_URL=postgres://…")
    requires("network namespaces", VirtualHosts.available(), "run as root with iproute2")
    with VirtualHosts(2) as hosts:
        # The services, as the hosts see them: over the bridge, never their own loopback.
        site = GradingSite(tmp_path, database, "local", settings, host=hosts.gateway)
        try:
            for i, ns in enumerate(hosts.namespaces):
                worker = Worker(site.env, tmp_path / f"host{i}.log", f"host{i}", beat=i == 0, netns=ns)
                worker.start()
                site.workers.append(worker)
            users = [django_user_model.objects.create_user(username=f"u{i}", password="x" * 12) for i in range(20)]
            started = time.monotonic()
            ids = [site.submit(users[i % len(users)]).id for i in range(SUBMISSIONS)]
            elapsed = site.wait_all_finished(ids, timeout=900)
            site.assert_graded_once(ids)
            per_host = Counter()
            for i in range(len(hosts.namespaces)):
                log = (tmp_path / f"host{i}.log").read_text()
                per_host[f"host{i}"] = len(re.findall(r"submission \d+: stored (?:graded|failed)", log))
            assert sum(per_host.values()) == SUBMISSIONS and all(per_host.values()), per_host
            total = time.monotonic() - started
            print(f"\nMULTIHOST {SUBMISSIONS} submissions in {total:.0f} s: " + ", ".join(
                f"{host} graded {n} ({n / elapsed * 60:.0f}/min)" for host, n in sorted(per_host.items())))
        finally:
            site.close()
