"""Hypothesis strategies for metadata records and for histories a controller could have written.

``records()`` draws any well-typed record, for encoding tests. ``histories()`` draws a sequence
that replays without error: it tracks which brokers, topics and partitions exist, so every
unregister, change and removal names something real. Broker ids, topic names and feature names
come from small pools so that re-registrations, re-created topic names, shared ISR members and
leadership moves happen often.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

from raftmeta.records import (
    LEADER_RECOVERY_UNCHANGED,
    LEADER_UNCHANGED,
    NO_LEADER,
    AccessControlEntryRecord,
    AclOperation,
    AclPatternType,
    AclPermissionType,
    AclResourceType,
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    ClearElrRecord,
    ClientQuotaRecord,
    ConfigRecord,
    ConfigResourceType,
    FeatureLevelRecord,
    NoOpRecord,
    PartitionChangeRecord,
    PartitionRecord,
    QuotaEntityData,
    Record,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    RemoveAccessControlEntryRecord,
    RemoveTopicRecord,
    RemoveUserScramCredentialRecord,
    RequestOutcomeRecord,
    TopicId,
    TopicRecord,
    UnregisterBrokerRecord,
    UserScramCredentialRecord,
)

int8s = st.integers(-(2**7), 2**7 - 1)
int16s = st.integers(-(2**15), 2**15 - 1)
int32s = st.integers(-(2**31), 2**31 - 1)
int64s = st.integers(-(2**63), 2**63 - 1)
uuids = st.binary(min_size=16, max_size=16)
names = st.text(max_size=24)
int32_tuples = st.lists(int32s, max_size=6).map(tuple)
optional_int32_tuples = st.none() | int32_tuples

endpoints = st.builds(BrokerEndpoint, names, names, st.integers(0, 65535), int16s)
features = st.builds(BrokerFeature, names, int16s, int16s)
quota_parts = st.builds(QuotaEntityData, names, st.none() | names)

RECORD_STRATEGIES: dict[type[Record], st.SearchStrategy[Record]] = {
    RegisterBrokerRecord: st.builds(
        RegisterBrokerRecord,
        broker_id=int32s,
        incarnation_id=uuids,
        broker_epoch=int64s,
        endpoints=st.lists(endpoints, max_size=3).map(tuple),
        features=st.lists(features, max_size=3).map(tuple),
        rack=st.none() | names,
        fenced=st.booleans(),
        in_controlled_shutdown=st.booleans(),
    ),
    UnregisterBrokerRecord: st.builds(UnregisterBrokerRecord, int32s, int64s),
    BrokerRegistrationChangeRecord: st.builds(
        BrokerRegistrationChangeRecord, int32s, int64s, int8s, int8s
    ),
    TopicRecord: st.builds(TopicRecord, names, uuids),
    PartitionRecord: st.builds(
        PartitionRecord,
        partition_id=int32s,
        topic_id=uuids,
        replicas=int32_tuples,
        isr=int32_tuples,
        removing_replicas=int32_tuples,
        adding_replicas=int32_tuples,
        leader=int32s,
        leader_recovery_state=int8s,
        leader_epoch=int32s,
        partition_epoch=int32s,
        eligible_leader_replicas=int32_tuples,
        last_known_elr=int32_tuples,
    ),
    PartitionChangeRecord: st.builds(
        PartitionChangeRecord,
        partition_id=int32s,
        topic_id=uuids,
        isr=optional_int32_tuples,
        leader=int32s,
        replicas=optional_int32_tuples,
        removing_replicas=optional_int32_tuples,
        adding_replicas=optional_int32_tuples,
        leader_recovery_state=int8s,
        eligible_leader_replicas=optional_int32_tuples,
        last_known_elr=optional_int32_tuples,
    ),
    RemoveTopicRecord: st.builds(RemoveTopicRecord, uuids),
    ConfigRecord: st.builds(ConfigRecord, int8s, names, names, st.none() | names),
    FeatureLevelRecord: st.builds(FeatureLevelRecord, names, int16s),
    AccessControlEntryRecord: st.builds(
        AccessControlEntryRecord, uuids, int8s, names, int8s, names, names, int8s, int8s
    ),
    RemoveAccessControlEntryRecord: st.builds(RemoveAccessControlEntryRecord, uuids),
    RegisterControllerRecord: st.builds(
        RegisterControllerRecord,
        controller_id=int32s,
        incarnation_id=uuids,
        endpoints=st.lists(endpoints, max_size=3).map(tuple),
        features=st.lists(features, max_size=3).map(tuple),
    ),
    NoOpRecord: st.just(NoOpRecord()),
    RequestOutcomeRecord: st.builds(
        RequestOutcomeRecord, uuids, names, int64s, st.binary(max_size=64)
    ),
    ClearElrRecord: st.builds(ClearElrRecord, names),
    UserScramCredentialRecord: st.builds(
        UserScramCredentialRecord,
        names,
        int8s,
        st.binary(max_size=64),
        st.binary(max_size=64),
        st.binary(max_size=64),
        int32s,
    ),
    RemoveUserScramCredentialRecord: st.builds(RemoveUserScramCredentialRecord, names, int8s),
    ClientQuotaRecord: st.builds(
        ClientQuotaRecord,
        st.lists(quota_parts, max_size=3).map(tuple),
        names,
        st.floats(allow_nan=False),
        st.booleans(),
    ),
}


def records() -> st.SearchStrategy[Record]:
    return st.one_of(*RECORD_STRATEGIES.values())


# --- valid histories -----------------------------------------------------------------------

BROKER_IDS = range(6)
TOPIC_NAMES = ("orders", "payments", "clicks", "logs", "web.logs", "web_logs")
FEATURE_NAMES = ("metadata.version", "kraft.version")
CONFIG_NAMES = ("retention.ms", "cleanup.policy", "min.insync.replicas")


@dataclass
class _Cluster:
    """What the history so far has created, so the next record names only what exists."""

    broker_epochs: dict[int, int] = field(default_factory=dict)
    topic_names: dict[TopicId, str] = field(default_factory=dict)
    replicas: dict[tuple[TopicId, int], tuple[int, ...]] = field(default_factory=dict)
    used_topic_ids: set[TopicId] = field(default_factory=set)
    acls: dict[bytes, tuple[object, ...]] = field(default_factory=dict)
    """ACL id → the ACL's other fields (replay refuses two ACLs that differ only by id)."""
    request_time_ms: int = 0
    """The last request outcome's time: the controller never writes an earlier one."""


def _replica_lists(min_size: int = 1) -> st.SearchStrategy[tuple[int, ...]]:
    return st.lists(st.sampled_from(BROKER_IDS), min_size=min_size, max_size=4, unique=True).map(
        tuple
    )


def _sublist(draw: st.DrawFn, items: tuple[int, ...]) -> tuple[int, ...]:
    keep = draw(st.lists(st.booleans(), min_size=len(items), max_size=len(items)))
    return tuple(item for item, kept in zip(items, keep, strict=True) if kept)


def _partition_record(draw: st.DrawFn, topic_id: TopicId, partition_id: int) -> PartitionRecord:
    replicas = draw(_replica_lists(min_size=draw(st.sampled_from((0, 1, 1, 1)))))
    isr = _sublist(draw, replicas)
    leader = draw(st.sampled_from((*isr, *replicas, NO_LEADER)))
    return PartitionRecord(
        partition_id=partition_id,
        topic_id=topic_id,
        replicas=replicas,
        isr=isr,
        removing_replicas=_sublist(draw, replicas),
        adding_replicas=(),
        leader=leader,
        leader_recovery_state=draw(st.sampled_from((0, 0, 1))),
        leader_epoch=draw(st.integers(0, 300)),
        partition_epoch=draw(st.integers(0, 300)),
        eligible_leader_replicas=_sublist(draw, tuple(r for r in replicas if r not in isr)),
        last_known_elr=draw(st.sampled_from(((), *((r,) for r in replicas)))),
    )


def _register_broker(draw: st.DrawFn, cluster: _Cluster, offset: int) -> list[Record]:
    broker_id = draw(st.sampled_from(BROKER_IDS))
    cluster.broker_epochs[broker_id] = offset
    return [
        RegisterBrokerRecord(
            broker_id=broker_id,
            incarnation_id=draw(uuids),
            broker_epoch=offset,
            endpoints=(BrokerEndpoint("PLAINTEXT", f"broker{broker_id}", 9092, 0),),
            features=(BrokerFeature("metadata.version", 1, 20),),
            rack=draw(st.sampled_from((None, "rack-a", "rack-b"))),
            fenced=draw(st.booleans()),
            in_controlled_shutdown=draw(st.sampled_from((False, False, True))),
        )
    ]


def _unregister_broker(draw: st.DrawFn, cluster: _Cluster, offset: int) -> list[Record]:
    if not cluster.broker_epochs:
        return []
    broker_id = draw(st.sampled_from(sorted(cluster.broker_epochs)))
    return [UnregisterBrokerRecord(broker_id, cluster.broker_epochs.pop(broker_id))]


def _change_broker(draw: st.DrawFn, cluster: _Cluster, offset: int) -> list[Record]:
    if not cluster.broker_epochs:
        return []
    broker_id = draw(st.sampled_from(sorted(cluster.broker_epochs)))
    return [
        BrokerRegistrationChangeRecord(
            broker_id,
            cluster.broker_epochs[broker_id],
            fenced=draw(st.sampled_from((-1, 0, 1))),
            in_controlled_shutdown=draw(st.sampled_from((0, 0, 1))),
        )
    ]


def _create_topic(draw: st.DrawFn, cluster: _Cluster, offset: int) -> list[Record]:
    free_names = [name for name in TOPIC_NAMES if name not in cluster.topic_names.values()]
    if not free_names:
        return []
    name = draw(st.sampled_from(free_names))
    topic_id = draw(uuids.filter(lambda candidate: candidate not in cluster.used_topic_ids))
    cluster.used_topic_ids.add(topic_id)
    cluster.topic_names[topic_id] = name
    created: list[Record] = [TopicRecord(name, topic_id)]
    for config_name in draw(st.lists(st.sampled_from(CONFIG_NAMES), max_size=2, unique=True)):
        created.append(ConfigRecord(ConfigResourceType.TOPIC, name, config_name, "1"))
    for partition_id in range(draw(st.integers(1, 4))):
        record = _partition_record(draw, topic_id, partition_id)
        cluster.replicas[topic_id, partition_id] = record.replicas
        created.append(record)
    return created


def _rewrite_partition(draw: st.DrawFn, cluster: _Cluster, offset: int) -> list[Record]:
    """A PartitionRecord for a partition that may already exist, as CreatePartitions or a
    snapshot would write it."""
    if not cluster.topic_names:
        return []
    topic_id = draw(st.sampled_from(sorted(cluster.topic_names)))
    record = _partition_record(draw, topic_id, draw(st.integers(0, 5)))
    cluster.replicas[topic_id, record.partition_id] = record.replicas
    return [record]


def _change_partition(draw: st.DrawFn, cluster: _Cluster, offset: int) -> list[Record]:
    if not cluster.replicas:
        return []
    topic_id, partition_id = draw(st.sampled_from(sorted(cluster.replicas)))
    replicas = cluster.replicas[topic_id, partition_id]
    new_replicas = draw(st.none() | _replica_lists(min_size=0))
    if new_replicas is not None:
        cluster.replicas[topic_id, partition_id] = replicas = new_replicas
    isr = draw(st.none() | st.just(_sublist(draw, replicas)))
    return [
        PartitionChangeRecord(
            partition_id=partition_id,
            topic_id=topic_id,
            isr=isr,
            leader=draw(st.sampled_from((LEADER_UNCHANGED, NO_LEADER, *replicas))),
            replicas=new_replicas,
            removing_replicas=draw(st.none() | st.just(_sublist(draw, replicas))),
            adding_replicas=draw(st.none() | st.just(_sublist(draw, replicas))),
            leader_recovery_state=draw(st.sampled_from((LEADER_RECOVERY_UNCHANGED, 0, 1))),
            eligible_leader_replicas=draw(st.none() | st.just(_sublist(draw, replicas))),
            last_known_elr=draw(st.none() | st.just(_sublist(draw, replicas)[:1])),
        )
    ]


def _remove_topic(draw: st.DrawFn, cluster: _Cluster, offset: int) -> list[Record]:
    if not cluster.topic_names:
        return []
    topic_id = draw(st.sampled_from(sorted(cluster.topic_names)))
    del cluster.topic_names[topic_id]
    for key in [key for key in cluster.replicas if key[0] == topic_id]:
        del cluster.replicas[key]
    return [RemoveTopicRecord(topic_id)]


def _config(draw: st.DrawFn, cluster: _Cluster, offset: int) -> list[Record]:
    resource_type, resource_name = draw(
        st.sampled_from(
            [(ConfigResourceType.TOPIC, name) for name in TOPIC_NAMES]
            + [(ConfigResourceType.BROKER, ""), (ConfigResourceType.BROKER, "1")]
        )
    )
    value = draw(st.none() | st.sampled_from(("1", "delete", "604800000")))
    return [ConfigRecord(resource_type, resource_name, draw(st.sampled_from(CONFIG_NAMES)), value)]


def _feature_level(draw: st.DrawFn, cluster: _Cluster, offset: int) -> list[Record]:
    return [FeatureLevelRecord(draw(st.sampled_from(FEATURE_NAMES)), draw(st.integers(0, 3)))]


ACL_PRINCIPALS = ("User:alice", "User:bob", "User:*")
ACL_NAMES = ("orders", "ord", "web", "*", "kafka-cluster")


def _create_acl(draw: st.DrawFn, cluster: _Cluster, offset: int) -> list[Record]:
    acl = AccessControlEntryRecord(
        draw(uuids.filter(lambda candidate: candidate not in cluster.acls)),
        int(draw(st.sampled_from([t for t in AclResourceType if t > AclResourceType.ANY]))),
        draw(st.sampled_from(ACL_NAMES)),
        int(draw(st.sampled_from((AclPatternType.LITERAL, AclPatternType.PREFIXED)))),
        draw(st.sampled_from(ACL_PRINCIPALS)),
        draw(st.sampled_from(("*", "10.0.0.1"))),
        int(draw(st.sampled_from([op for op in AclOperation if op > AclOperation.ANY]))),
        int(draw(st.sampled_from((AclPermissionType.ALLOW, AclPermissionType.DENY)))),
    )
    fields = (
        acl.resource_type,
        acl.resource_name,
        acl.pattern_type,
        acl.principal,
        acl.host,
        acl.operation,
        acl.permission_type,
    )
    if fields in cluster.acls.values():
        return []
    cluster.acls[acl.acl_id] = fields
    return [acl]


def _remove_acl(draw: st.DrawFn, cluster: _Cluster, offset: int) -> list[Record]:
    if not cluster.acls:
        return []
    acl_id = draw(st.sampled_from(sorted(cluster.acls)))
    del cluster.acls[acl_id]
    return [RemoveAccessControlEntryRecord(acl_id)]


QUOTA_ENTITIES = (
    (QuotaEntityData("user", "alice"),),
    (QuotaEntityData("user", None),),
    (QuotaEntityData("client-id", "c1"), QuotaEntityData("user", "alice")),
    (QuotaEntityData("client-id", None),),
    (QuotaEntityData("ip", "10.0.0.1"),),
)


def _client_quota(draw: st.DrawFn, cluster: _Cluster, offset: int) -> list[Record]:
    """A quota set or removed, on entities from a small pool so both meet a set key."""
    return [
        ClientQuotaRecord(
            draw(st.sampled_from(QUOTA_ENTITIES)),
            draw(st.sampled_from(("producer_byte_rate", "request_percentage"))),
            draw(st.sampled_from((1024.0, 12.5))),
            draw(st.booleans()),
        )
    ]


CONTROLLER_IDS = (3000, 3001, 3002)


def _register_controller(draw: st.DrawFn, cluster: _Cluster, offset: int) -> list[Record]:
    """A controller's (re-)registration: a new incarnation or new listeners replace the old."""
    controller_id = draw(st.sampled_from(CONTROLLER_IDS))
    port = draw(st.integers(9000, 9003))
    return [
        RegisterControllerRecord(
            controller_id,
            draw(uuids),
            (BrokerEndpoint("KAFKA", "127.0.0.1", port, 0),),
            (BrokerFeature("metadata.version", 1, 3),),
        )
    ]


REQUEST_IDS = tuple(bytes([n]) * 16 for n in range(4))


def _request_outcome(draw: st.DrawFn, cluster: _Cluster, offset: int) -> list[Record]:
    """An admin request's outcome; ids from a small pool, and now and then a gap past the
    retention, so kept, replaced and expired outcomes all occur."""
    cluster.request_time_ms += draw(st.sampled_from((0, 1_000, 60_000, 11 * 60_000)))
    return [
        RequestOutcomeRecord(
            draw(st.sampled_from(REQUEST_IDS)),
            "CreateTopics",
            cluster.request_time_ms,
            draw(st.binary(max_size=8)),
        )
    ]


def _no_op(draw: st.DrawFn, cluster: _Cluster, offset: int) -> list[Record]:
    return [NoOpRecord()]


_STEPS = (
    _register_broker,
    _unregister_broker,
    _change_broker,
    _create_topic,
    _create_topic,
    _rewrite_partition,
    _change_partition,
    _change_partition,
    _change_partition,
    _remove_topic,
    _config,
    _feature_level,
    _create_acl,
    _create_acl,
    _remove_acl,
    _client_quota,
    _register_controller,
    _request_outcome,
    _no_op,
)


@st.composite
def histories(draw: st.DrawFn, max_steps: int = 30) -> list[Record]:
    """Records a controller could have committed from an empty log, in log order."""
    cluster = _Cluster()
    history: list[Record] = []
    for _ in range(draw(st.integers(0, max_steps))):
        step = draw(st.sampled_from(_STEPS))
        history.extend(step(draw, cluster, len(history)))
    return history
