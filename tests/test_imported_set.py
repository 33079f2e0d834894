"""A project's imported-id state (annotation/ledger.ImportedSet) on a real Redis: a retired
project answers from its filter alone, and a late mark after its set expired makes a set that
expires again instead of one kept for ever and trusted as whole."""

from __future__ import annotations

import pytest
import redis

from annotation.ledger import ImportedSet
from tests.helpers.redis_server import OwnRedis

pytestmark = pytest.mark.integration


def test_a_retired_set_is_read_from_its_filter_and_a_late_mark_expires_too(
    own_redis: OwnRedis,
) -> None:
    connection = redis.Redis.from_url(own_redis.url)
    imported = ImportedSet(connection, "lowtide:annotation:imported:test", capacity=1000)
    early = [f"s-{i}" for i in range(100)]
    imported.mark(early)
    assert imported.exact() and imported.maybe(early[:3]) == set(early[:3])
    assert imported.maybe(["never-sent"]) == set()  # the set is whole: a plain no

    imported.retire(after_s=3600)
    assert not imported.exact()  # from now on a hit is a maybe, confirmed in Label Studio
    assert 0 < connection.ttl(imported.key) <= 3600
    assert imported.maybe(early[:3]) == set(early[:3])  # the filter never misses what it holds

    # The set expires; an import that was on its way when the project filled marks its ids.
    connection.delete(imported.key)
    imported.mark(["straggler"])
    assert 0 < connection.ttl(imported.key) <= 3600  # not kept for ever
    assert not imported.exact()  # a set of one id is not the project's whole set
    assert imported.maybe([early[0], "straggler"]) == {early[0], "straggler"}
    assert connection.ttl(imported.filter.key) == -1  # the filter stays


def test_marks_into_a_live_project_never_expire(own_redis: OwnRedis) -> None:
    connection = redis.Redis.from_url(own_redis.url)
    imported = ImportedSet(connection, "lowtide:annotation:imported:live", capacity=1000)
    imported.mark(["a", "b"])
    imported.mark(["c"])
    assert connection.ttl(imported.key) == -1 and imported.count() == 3 and imported.exact()
