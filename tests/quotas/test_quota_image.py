"""Client quotas in the image: replay, snapshots, and Kafka's precedence of the eight levels a
(user, client id) pair's quotas come from, and the two an ip's come from."""

from __future__ import annotations

import pytest

from raftmeta.image import MetadataImage, ReplayError
from raftmeta.records import ClientQuotaRecord, QuotaEntityData, decode_record, encode_each

KEY = "producer_byte_rate"


def quota(
    parts: dict[str, str | None], key: str, value: float, remove: bool = False
) -> ClientQuotaRecord:
    return ClientQuotaRecord(
        tuple(QuotaEntityData(kind, name) for kind, name in sorted(parts.items())),
        key,
        value,
        remove,
    )


LEVELS: list[dict[str, str | None]] = [
    {"user": "alice", "client-id": "c1"},
    {"user": "alice", "client-id": None},
    {"user": "alice"},
    {"user": None, "client-id": "c1"},
    {"user": None, "client-id": None},
    {"user": None},
    {"client-id": "c1"},
    {"client-id": None},
]
"""Kafka's order for user alice with client id c1, most specific first."""


def replayed(records: list[ClientQuotaRecord]) -> MetadataImage:
    image = MetadataImage()
    image.apply_batch(records, 0)
    return image


def test_each_level_overrides_every_less_specific_one_and_yields_to_the_more_specific() -> None:
    """Levels are added from the least specific up: each one, once set, is what alice with c1
    gets; removed again, the level below takes over."""
    image = MetadataImage()
    offset = 0
    assert image.effective_client_quotas("alice", "c1") == {}
    for rank in reversed(range(len(LEVELS))):
        image.apply(quota(LEVELS[rank], KEY, 1000.0 + rank), offset)
        offset += 1
        assert image.effective_client_quotas("alice", "c1") == {KEY: 1000.0 + rank}, LEVELS[rank]
    for rank in range(len(LEVELS) - 1):
        image.apply(quota(LEVELS[rank], KEY, 0.0, remove=True), offset)
        offset += 1
        assert image.effective_client_quotas("alice", "c1") == {KEY: 1000.0 + rank + 1}


def test_each_key_comes_from_its_own_most_specific_level() -> None:
    image = replayed(
        [
            quota({"user": "alice"}, "producer_byte_rate", 1.0),
            quota({"client-id": None}, "consumer_byte_rate", 2.0),
            quota({"client-id": None}, "producer_byte_rate", 3.0),
            quota({"user": None}, "request_percentage", 4.0),
        ]
    )
    assert image.effective_client_quotas("alice", "c1") == {
        "producer_byte_rate": 1.0,
        "consumer_byte_rate": 2.0,
        "request_percentage": 4.0,
    }
    assert image.effective_client_quotas("bob", "c2") == {
        "producer_byte_rate": 3.0,
        "consumer_byte_rate": 2.0,
        "request_percentage": 4.0,
    }


def test_an_ip_takes_its_own_quota_before_the_default_ips() -> None:
    image = replayed([quota({"ip": None}, "connection_creation_rate", 10.0)])
    assert image.effective_ip_quotas("10.0.0.1") == {"connection_creation_rate": 10.0}
    image.apply(quota({"ip": "10.0.0.1"}, "connection_creation_rate", 3.0), 1)
    assert image.effective_ip_quotas("10.0.0.1") == {"connection_creation_rate": 3.0}
    assert image.effective_ip_quotas("10.0.0.2") == {"connection_creation_rate": 10.0}
    assert image.effective_client_quotas("alice", "c1") == {}


def test_quotas_survive_a_snapshot_and_equal_images_write_equal_snapshots() -> None:
    records = [quota(level, KEY, 10.0 * (rank + 1)) for rank, level in enumerate(LEVELS)]
    records.append(quota({"ip": "::1"}, "connection_creation_rate", 5.0))
    image = replayed(records)
    again = replayed(list(reversed(records)))
    loaded = MetadataImage.from_records(image.to_records(), image.offset)
    assert loaded == image
    assert again.digest() == image.digest()
    written = [decode_record(data) for data in image.snapshot_work()()]
    assert written == list(image.to_records())
    assert sum(isinstance(record, ClientQuotaRecord) for record in written) == 9
    assert loaded.effective_client_quotas("alice", "c1") == {KEY: 10.0}
    assert encode_each(written) == encode_each(image.to_records())


def test_an_entity_whose_last_key_is_removed_is_gone() -> None:
    image = replayed([quota({"user": "alice"}, KEY, 1.0), quota({"user": "alice"}, KEY, 0.0, True)])
    assert image == MetadataImage.from_records([], image.offset)


def test_replay_refuses_an_empty_entity_or_a_type_named_twice() -> None:
    with pytest.raises(ReplayError, match="empty entity"):
        replayed([ClientQuotaRecord((), KEY, 1.0)])
    twice = (QuotaEntityData("user", "a"), QuotaEntityData("user", "b"))
    with pytest.raises(ReplayError, match="twice"):
        replayed([ClientQuotaRecord(twice, KEY, 1.0)])
