"""The site-wide board's ranking (score histogram and sorted interval ends of every entry of
a version, students who hide left out) in the cache: every viewer polls the board every few
seconds, and the ranking changes only when an entry does.

It is forgotten at once and again when the writing transaction commits (so a request that
read the old rows meanwhile cannot keep them), whenever an entry of the version changes or a
student hides or shows themselves; the time limit bounds what a cache this process cannot
reach (memory, where there is no Redis) keeps.

The cache only ever saves work: when Redis does not answer, a read is a miss, and a write or
a forget is skipped (the time limit bounds what it may then keep). Above all, a verdict is
stored inside the transaction that forgets its board: an unreachable cache must never roll
that back (issue 12: nothing lost, whatever fails).
"""

from __future__ import annotations

from typing import Any

from django.core.cache import cache
from django.db import connection, transaction

from caching.best_effort import quietly

RANKING_TTL_S = 30


def ranking_key(version_id: int) -> str:
    # The database's name: two sites (or test runs) sharing one Redis never share a board.
    # v2: a Ranking holds the ratios (the medians) where it held the low ends; a cached old one
    # would rank by the wrong numbers until it expired.
    return f"board-ranking-v2:{connection.settings_dict['NAME']}:{version_id}"


def ranking_get(version_id: int) -> Any:
    return quietly(lambda: cache.get(ranking_key(version_id)), what="board")


def ranking_set(version_id: int, ranking: Any) -> None:
    quietly(lambda: cache.set(ranking_key(version_id), ranking, RANKING_TTL_S), what="board")


def ranking_forget(*version_ids: int) -> None:
    keys = [ranking_key(v) for v in version_ids]
    quietly(lambda: cache.delete_many(keys), what="board")
    transaction.on_commit(lambda: quietly(lambda: cache.delete_many(keys), what="board"))

