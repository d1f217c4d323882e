"""ACL records in the image: replay rules, the authorizer's index, snapshots."""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings

from raftmeta.common.acls import AclBinding, AclBindingFilter
from raftmeta.image import MetadataImage, ReplayError
from raftmeta.records import (
    AccessControlEntryRecord,
    AclOperation,
    AclPatternType,
    AclPermissionType,
    AclResourceType,
    Record,
    RemoveAccessControlEntryRecord,
    decode_record,
    encode_each,
)
from tests.metadata.strategies import ACL_NAMES, histories

TOPIC = int(AclResourceType.TOPIC)
LITERAL = int(AclPatternType.LITERAL)
PREFIXED = int(AclPatternType.PREFIXED)


def acl(
    acl_id: int, name: str = "orders", pattern: int = LITERAL, **fields: int | str
) -> AccessControlEntryRecord:
    values: dict[str, int | str] = {
        "resource_type": TOPIC,
        "principal": "User:alice",
        "host": "*",
        "operation": int(AclOperation.READ),
        "permission_type": int(AclPermissionType.ALLOW),
        **fields,
    }
    return AccessControlEntryRecord(
        acl_id.to_bytes(16, "big"),
        int(values["resource_type"]),
        name,
        pattern,
        str(values["principal"]),
        str(values["host"]),
        int(values["operation"]),
        int(values["permission_type"]),
    )


def replay(records: list[Record]) -> MetadataImage:
    image = MetadataImage()
    image.apply_batch(records, 0)
    return image


def test_create_then_remove() -> None:
    image = replay([acl(1), acl(2, "ord", PREFIXED)])
    assert sorted(image.acls.by_id) == [acl(1).acl_id, acl(2).acl_id]
    image.apply(RemoveAccessControlEntryRecord(acl(1).acl_id), 2)
    assert list(image.acls.by_id.values()) == [acl(2, "ord", PREFIXED)]
    assert image.acls.find(acl(9)) is None


@pytest.mark.parametrize(
    ("records", "reason"),
    [
        ([RemoveAccessControlEntryRecord(bytes(16))], "no ACL with id"),
        ([acl(1), acl(1, "other")], "already exists"),
        ([acl(1), acl(2)], "repeats ACL"),
        ([acl(1, resource_type=int(AclResourceType.ANY))], "Invalid resourceType"),
        ([acl(1, pattern=int(AclPatternType.MATCH))], "Invalid patternType"),
        ([acl(1, operation=int(AclOperation.ANY))], "Invalid operation"),
        ([acl(1, permission_type=int(AclPermissionType.ANY))], "Invalid permissionType"),
        ([acl(1, "")], "Resource name should not be empty"),
    ],
)
def test_replay_refuses_what_no_controller_writes(records: list[Record], reason: str) -> None:
    with pytest.raises(ReplayError, match=reason):
        replay(records)


def test_acls_are_written_into_snapshots_and_load_back() -> None:
    image = replay([acl(2), acl(1, "ord", PREFIXED)])
    records = list(image.to_records())
    assert records == [acl(1, "ord", PREFIXED), acl(2)]
    loaded = MetadataImage.from_records(
        (decode_record(data) for data in encode_each(records)), image.offset
    )
    assert loaded == image and loaded.digest() == image.digest()
    work = image.snapshot_work()
    assert [decode_record(data) for data in work()] == records


def test_a_log_written_before_acls_existed_loads_unchanged() -> None:
    # Bytes as a pre-ACL build wrote them: a TopicRecord and a FeatureLevelRecord.
    old = [
        msgpack.packb((2, 0, "orders", bytes(range(16))), use_bin_type=True),
        msgpack.packb((12, 0, "metadata.version", 7), use_bin_type=True),
    ]
    image = replay([decode_record(data) for data in old])
    assert len(image.acls) == 0
    assert encode_each(list(image.to_records())) == [old[1], old[0]]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_the_index_finds_exactly_what_a_match_filter_would(history: list[Record]) -> None:
    image = replay(history)
    everything = list(image.acls.by_id.values())
    for resource_type in AclResourceType:
        if resource_type <= AclResourceType.ANY:
            continue
        for name in (*ACL_NAMES, "orders-eu", "o", "w"):
            wanted = AclBindingFilter(int(resource_type), name, int(AclPatternType.MATCH))
            expected = sorted(a.acl_id for a in everything if wanted.matches(AclBinding.of(a)))
            found = [a.acl_id for a in image.acls.applicable(int(resource_type), name)]
            assert sorted(found) == expected
            assert len(found) == len(set(found))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_a_copy_keeps_its_acls_apart(history: list[Record]) -> None:
    image = replay(history)
    copy = image.copy()
    copy.apply(acl(10**6, "fresh-name"), image.offset + 1)
    assert acl(10**6).acl_id not in image.acls.by_id
    assert acl(10**6, "fresh-name") not in image.acls.applicable(TOPIC, "fresh-name")
    assert acl(10**6, "fresh-name") in copy.acls.applicable(TOPIC, "fresh-name")
