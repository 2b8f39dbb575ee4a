"""The board's cache only ever saves work: an unreachable Redis is a miss, never an error."""
import pytest
from django.db import transaction

from leaderboards import board_cache

pytestmark = pytest.mark.django_db(transaction=True)

UNREACHABLE = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                           "LOCATION": "redis://127.0.0.1:1/0"}}  # nothing listens on port 1


def test_an_unreachable_cache_never_fails_the_transaction_that_forgets_a_board(settings):
    settings.CACHES = UNREACHABLE
    with transaction.atomic():  # as when a verdict is stored: this must commit
        board_cache.ranking_forget(1, 2)
    assert board_cache.ranking_get(1) is None  # a miss
    board_cache.ranking_set(1, {"anything": 1})  # skipped, quietly


def test_a_reachable_cache_keeps_and_forgets_a_ranking(settings):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    board_cache.ranking_set(7, {"histogram": [1]})
    assert board_cache.ranking_get(7) == {"histogram": [1]}
    board_cache.ranking_forget(7)
    assert board_cache.ranking_get(7) is None
