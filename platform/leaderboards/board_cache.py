"""The site-wide board's ranking (score histogram and sorted interval ends of every entry of
a version, students who hide left out) in the cache: every viewer polls the board every few
seconds, and the ranking changes only when an entry does.

It is forgotten at once and again when the writing transaction commits (so a request that
read the old rows meanwhile cannot keep them), whenever an entry of the version changes or a
student hides or shows themselves; the time limit bounds what a cache this process cannot
reach (memory, where there is no Redis) keeps.
"""

from __future__ import annotations

from django.core.cache import cache
from django.db import connection, transaction

RANKING_TTL_S = 30


def ranking_key(version_id: int) -> str:
    # The database's name: two sites (or test runs) sharing one Redis never share a board.
    return f"board-ranking:{connection.settings_dict['NAME']}:{version_id}"


def ranking_forget(*version_ids: int) -> None:
    keys = [ranking_key(v) for v in version_ids]
    cache.delete_many(keys)
    transaction.on_commit(lambda: cache.delete_many(keys))
