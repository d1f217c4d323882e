from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings

from raftmeta.records import (
    RECORD_CLASSES,
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    FeatureLevelRecord,
    NoOpRecord,
    PartitionChangeRecord,
    PartitionRecord,
    Record,
    RecordDecodeError,
    RecordType,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnregisterBrokerRecord,
    decode_record,
    encode_each,
    encode_record,
    fast_constructor,
    uuid_from_str,
    uuid_to_str,
)
from tests.metadata.strategies import RECORD_STRATEGIES, records

TOPIC_ID = bytes(range(16))


@pytest.mark.parametrize("record_class", RECORD_CLASSES, ids=lambda cls: cls.__name__)
def test_every_record_type_survives_encoding(record_class: type[Record]) -> None:
    @settings(deadline=None)
    @given(RECORD_STRATEGIES[record_class])
    def round_trip(record: Record) -> None:
        decoded = decode_record(encode_record(record))
        assert type(decoded) is record_class
        assert decoded == record

    round_trip()


@settings(deadline=None)
@given(records())
def test_encode_each_matches_encode_record(record: Record) -> None:
    assert encode_each([record, record]) == [encode_record(record)] * 2


def test_type_ids_and_versions_are_kraft_api_keys() -> None:
    assert {cls.__name__: (int(cls.record_type), cls.version) for cls in RECORD_CLASSES} == {
        "RegisterBrokerRecord": (0, 1),
        "UnregisterBrokerRecord": (1, 0),
        "TopicRecord": (2, 0),
        "PartitionRecord": (3, 2),
        "ConfigRecord": (4, 0),
        "PartitionChangeRecord": (5, 2),
        "RemoveTopicRecord": (9, 0),
        "FeatureLevelRecord": (12, 0),
        "BrokerRegistrationChangeRecord": (17, 1),
        "AccessControlEntryRecord": (18, 0),
        "RemoveAccessControlEntryRecord": (19, 0),
        "NoOpRecord": (20, 0),
        "RegisterControllerRecord": (27, 0),
        "RequestOutcomeRecord": (200, 0),
        "ClearElrRecord": (28, 0),
        "UserScramCredentialRecord": (11, 0),
        "RemoveUserScramCredentialRecord": (22, 0),
        "ClientQuotaRecord": (14, 0),
    }


# Bytes as a build before KIP-966 wrote them (version 0, no ELR fields), kept verbatim so a
# change to the decoder that breaks old logs and snapshots fails here.
PARTITION_V0 = msgpack.packb([3, 0, 4, TOPIC_ID, [1, 2, 3], [1, 2], [], [], 1, 0, 7, 9])
PARTITION_CHANGE_V0 = msgpack.packb([5, 0, 4, TOPIC_ID, [2], -2, None, None, None, -1])


def test_version_0_partition_records_still_decode_with_empty_elr() -> None:
    record = decode_record(PARTITION_V0)
    assert record == PartitionRecord(4, TOPIC_ID, (1, 2, 3), (1, 2), (), (), 1, 0, 7, 9, (), ())
    change = decode_record(PARTITION_CHANGE_V0)
    assert change == PartitionChangeRecord(4, TOPIC_ID, isr=(2,))
    assert change.eligible_leader_replicas is None and change.last_known_elr is None


def test_version_2_partition_records_carry_the_elr_fields() -> None:
    record = PartitionRecord(
        4, TOPIC_ID, (1, 2, 3), (), leader=-1, eligible_leader_replicas=(2, 3), last_known_elr=(1,)
    )
    array = msgpack.unpackb(encode_record(record))
    assert array[:2] == [3, 2] and array[-2:] == [[2, 3], [1]]
    assert decode_record(encode_record(record)) == record


def test_a_truncated_version_0_record_is_refused_not_padded() -> None:
    with pytest.raises(RecordDecodeError, match="PartitionRecord v0 is malformed"):
        decode_record(msgpack.packb([3, 0, 4, TOPIC_ID, [1], [1]]))


def test_a_record_is_a_positional_array_of_type_version_and_fields() -> None:
    assert msgpack.unpackb(encode_record(TopicRecord("orders", TOPIC_ID))) == [
        2,
        0,
        "orders",
        TOPIC_ID,
    ]
    assert msgpack.unpackb(encode_record(NoOpRecord())) == [20, 0]
    register = RegisterBrokerRecord(
        1, TOPIC_ID, 7, (BrokerEndpoint("PLAINTEXT", "h", 9092, 0),), (BrokerFeature("mv", 1, 9),)
    )
    assert msgpack.unpackb(encode_record(register)) == [
        0,
        1,
        1,
        TOPIC_ID,
        7,
        [["PLAINTEXT", "h", 9092, 0]],
        [["mv", 1, 9]],
        None,
        True,
        False,
    ]


def test_defaults_follow_kraft() -> None:
    register = RegisterBrokerRecord(1, TOPIC_ID, 5)
    assert register.fenced is True
    assert register.in_controlled_shutdown is False
    assert register.rack is None
    change = PartitionChangeRecord(0, TOPIC_ID)
    assert (change.isr, change.replicas, change.removing_replicas, change.adding_replicas) == (
        None,
        None,
        None,
        None,
    )
    assert change.leader == -2
    assert change.leader_recovery_state == -1
    broker_change = BrokerRegistrationChangeRecord(1, 5)
    assert (broker_change.fenced, broker_change.in_controlled_shutdown) == (0, 0)


def test_records_are_frozen() -> None:
    record = RemoveTopicRecord(TOPIC_ID)
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.topic_id = bytes(16)  # type: ignore[misc]
    decoded = decode_record(encode_record(record))
    assert isinstance(decoded, RemoveTopicRecord)
    with pytest.raises(dataclasses.FrozenInstanceError):
        decoded.topic_id = bytes(16)  # type: ignore[misc]


def test_unknown_record_type_is_an_error() -> None:
    with pytest.raises(RecordDecodeError, match="unknown metadata record type 6"):
        decode_record(msgpack.packb([6, 0, "x"]))
    with pytest.raises(RecordDecodeError, match="unknown metadata record type 99"):
        decode_record(msgpack.packb([99, 0]))


def test_unknown_version_is_an_error() -> None:
    with pytest.raises(RecordDecodeError, match=r"TopicRecord version 1 is not supported"):
        decode_record(msgpack.packb([int(RecordType.TOPIC), 1, "orders", TOPIC_ID]))
    with pytest.raises(RecordDecodeError, match=r"RegisterBrokerRecord version 3"):
        decode_record(msgpack.packb([0, 3, 1, TOPIC_ID, 5, [], [], None, True, False, []]))


def test_wrong_field_count_is_an_error() -> None:
    with pytest.raises(RecordDecodeError, match="has 1 fields, expected 2"):
        decode_record(msgpack.packb([2, 0, "orders"]))
    with pytest.raises(RecordDecodeError, match="has 1 fields, expected 0"):
        decode_record(msgpack.packb([20, 0, 1]))
    with pytest.raises(RecordDecodeError, match="has 3 fields, expected 2"):
        decode_record(msgpack.packb([1, 0, 1, 2, 3]))


def test_malformed_nested_fields_are_an_error() -> None:
    with pytest.raises(RecordDecodeError, match="malformed"):
        decode_record(msgpack.packb([0, 1, 1, TOPIC_ID, 5, 17, [], None, True, False]))


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\xc1",
        msgpack.packb(5),
        msgpack.packb({"type": 2}),
        msgpack.packb([2]),
        msgpack.packb([[2], 0]),
        msgpack.packb([2, 0, "a", TOPIC_ID]) + b"\x00",
    ],
)
def test_garbage_is_an_error(data: bytes) -> None:
    with pytest.raises(RecordDecodeError):
        decode_record(data)


def test_encoding_something_else_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="BrokerFeature is not a metadata record"):
        encode_record(BrokerFeature("x", 1, 2))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="BrokerFeature is not a metadata record"):
        encode_each([NoOpRecord(), BrokerFeature("x", 1, 2)])  # type: ignore[list-item]


def test_fast_constructor_builds_the_real_frozen_class() -> None:
    build = fast_constructor(ConfigRecord)
    built = build(2, "orders", "retention.ms", None)
    assert type(built) is ConfigRecord
    assert built == ConfigRecord(2, "orders", "retention.ms", None)
    assert hash(built) == hash(ConfigRecord(2, "orders", "retention.ms", None))
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.value = "1"  # type: ignore[misc]
    with pytest.raises(TypeError):
        build(2, "orders", "retention.ms")


def test_fast_constructor_refuses_classes_without_slots() -> None:
    @dataclasses.dataclass(frozen=True)
    class Unslotted:
        value: int

    with pytest.raises(TypeError, match="not a slotted dataclass"):
        fast_constructor(Unslotted)


def test_ids_print_as_kafka_does() -> None:
    assert uuid_to_str(bytes(16)) == "AAAAAAAAAAAAAAAAAAAAAA"
    assert uuid_from_str(uuid_to_str(TOPIC_ID)) == TOPIC_ID
    with pytest.raises(ValueError, match="16"):
        uuid_from_str("AAAA")


def test_partition_records_are_compact() -> None:
    record = PartitionRecord(
        partition_id=17,
        topic_id=TOPIC_ID,
        replicas=(1, 2, 3),
        isr=(1, 2, 3),
        leader=1,
        leader_epoch=5,
        partition_epoch=9,
    )
    assert len(encode_record(record)) <= 40


def test_register_and_feature_records_keep_nested_values_typed() -> None:
    record = RegisterBrokerRecord(
        3,
        TOPIC_ID,
        11,
        endpoints=(BrokerEndpoint("PLAINTEXT", "broker3", 9092, 0),),
        features=(BrokerFeature("metadata.version", 1, 20),),
        rack="rack-a",
        fenced=False,
    )
    decoded = decode_record(encode_record(record))
    assert isinstance(decoded, RegisterBrokerRecord)
    assert type(decoded.endpoints[0]) is BrokerEndpoint
    assert type(decoded.features[0]) is BrokerFeature
    assert decode_record(encode_record(FeatureLevelRecord("metadata.version", 20))) == (
        FeatureLevelRecord("metadata.version", 20)
    )
    assert decode_record(encode_record(UnregisterBrokerRecord(3, 11))) == UnregisterBrokerRecord(
        3, 11
    )


def _frozen_dataclass_init(cls: type[Any]) -> Any:
    """A frozen dataclass with ``cls``'s fields and defaults and the decorator's own
    ``__init__``, to compare against."""
    twin: Any = dataclasses.dataclass(frozen=True, slots=True)(
        type(
            cls.__name__,
            (),
            {
                "__annotations__": {field.name: Any for field in dataclasses.fields(cls)},
                **{
                    field.name: field.default
                    for field in dataclasses.fields(cls)
                    if field.default is not dataclasses.MISSING
                },
            },
        )
    )
    return twin


def _parameters(cls: type[Any]) -> list[tuple[str, Any, Any]]:
    return [
        (parameter.name, parameter.kind, parameter.default)
        for parameter in inspect.signature(cls).parameters.values()
    ]


@pytest.mark.parametrize("record_class", RECORD_CLASSES, ids=lambda cls: cls.__name__)
def test_record_constructors_keep_the_dataclass_signature(record_class: type[Record]) -> None:
    """Records get a faster ``__init__``; callers must see the dataclass's own one."""
    ordinary = _frozen_dataclass_init(record_class)
    assert _parameters(record_class) == _parameters(ordinary)

    @settings(deadline=None, max_examples=25)
    @given(RECORD_STRATEGIES[record_class])
    def same_fields(record: Record) -> None:
        values = {field.name: getattr(record, field.name) for field in dataclasses.fields(record)}
        by_keyword = record_class(**values)
        by_position = record_class(*values.values())
        reference = ordinary(**values)
        for built in (by_keyword, by_position):
            assert type(built) is record_class
            assert built == record
            assert dataclasses.astuple(built) == dataclasses.astuple(reference)
            assert hash(built) == hash(record)
        if values:
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(by_keyword, next(iter(values)), None)

    same_fields()


def test_record_constructors_fill_defaults_and_refuse_missing_fields() -> None:
    record = PartitionRecord(1, TOPIC_ID, (1, 2), (1,), leader=2)
    assert record.removing_replicas == ()
    assert record.leader == 2
    assert record.leader_epoch == 0
    assert record.last_known_elr == ()
    with pytest.raises(TypeError, match="isr"):
        PartitionRecord(1, TOPIC_ID, (1, 2))  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        TopicRecord("orders", TOPIC_ID, 3)  # type: ignore[call-arg]


def test_a_subclass_of_a_record_keeps_its_own_class() -> None:
    class NamedTopic(TopicRecord):
        """Inherits the record's ``__init__`` (a decorated subclass would get its own)."""

        __slots__ = ()

    built = NamedTopic("orders", TOPIC_ID)
    assert type(built) is NamedTopic
    assert (built.name, built.topic_id) == ("orders", TOPIC_ID)


def test_generated_builders_refuse_fields_named_like_their_own_locals() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Clashing:
        cls: int

    with pytest.raises(TypeError, match="clash"):
        fast_constructor(Clashing)
