"""The columns of each ``kind`` the raftmeta data source reads, as Arrow schemas and Spark DDL.

Both forms are written out here, next to each other, so that the Spark schema and the Arrow
batches the readers yield cannot drift apart (a test compares them). No Spark import.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

KINDS = ("partitions", "brokers", "topics", "events", "configs")

_INT_LIST = pa.list_(pa.int32())

PARTITIONS = pa.schema(
    [
        ("cluster", pa.string()),
        ("snapshot_offset", pa.int64()),
        ("topic", pa.string()),
        ("topic_id", pa.string()),
        ("partition", pa.int32()),
        ("replicas", _INT_LIST),
        ("isr", _INT_LIST),
        ("leader", pa.int32()),
        ("preferred_leader", pa.int32()),
        ("leader_epoch", pa.int32()),
        ("partition_epoch", pa.int32()),
        ("leader_recovery_state", pa.string()),
        ("elr", _INT_LIST),
        ("last_known_elr", _INT_LIST),
    ]
)
"""One row per partition. ``snapshot_offset``: the state holds every record below it.
``preferred_leader`` is ``replicas[0]``, or -1 with no replicas; ``leader`` is -1 if none.
``elr`` and ``last_known_elr`` (KIP-966) are empty when the feature is off and for snapshots
written before it; they come last so readers that select columns by name are unaffected."""

BROKERS = pa.schema(
    [
        ("cluster", pa.string()),
        ("snapshot_offset", pa.int64()),
        ("broker_id", pa.int32()),
        ("rack", pa.string()),
        ("fenced", pa.bool_()),
        ("in_controlled_shutdown", pa.bool_()),
        ("broker_epoch", pa.int64()),
    ]
)

TOPICS = pa.schema(
    [
        ("cluster", pa.string()),
        ("snapshot_offset", pa.int64()),
        ("topic", pa.string()),
        ("topic_id", pa.string()),
        ("partitions", pa.int32()),
        ("configs", pa.map_(pa.string(), pa.string())),
    ]
)
"""``configs`` holds the topic's own settings only, not broker or cluster defaults."""

EVENTS = pa.schema(
    [
        ("cluster", pa.string()),
        ("offset", pa.int64()),
        ("epoch", pa.int32()),
        ("batch_time_ms", pa.int64()),
        ("record_type", pa.string()),
        ("broker_id", pa.int32()),
        ("topic", pa.string()),
        ("topic_id", pa.string()),
        ("partition", pa.int32()),
        ("replicas", _INT_LIST),
        ("leader", pa.int32()),
        ("previous_leader", pa.int32()),
        ("isr", _INT_LIST),
        ("previous_isr", _INT_LIST),
        ("isr_added", _INT_LIST),
        ("isr_removed", _INT_LIST),
        ("leader_epoch", pa.int32()),
        ("leader_recovery_state", pa.string()),
        ("election", pa.string()),
        ("fencing", pa.string()),
        ("controlled_shutdown", pa.bool_()),
    ]
)
"""One row per metadata record in the log, in log order, with the state it changed.

``election`` is set when a record changed a partition's leader: ``preferred`` (to
``replicas[0]``), ``non_preferred`` (to another ISR member), ``unclean`` (to a replica outside
the ISR before the change, or marked RECOVERING) or ``leader_lost`` (to no leader). ``fencing``
is ``fenced`` or ``unfenced`` for a BrokerRegistrationChangeRecord that changes it, and
``controlled_shutdown`` is true when one enters controlled shutdown."""

CONFIGS = pa.schema(
    [
        ("cluster", pa.string()),
        ("snapshot_offset", pa.int64()),
        ("resource_type", pa.string()),
        ("resource_name", pa.string()),
        ("entity", pa.map_(pa.string(), pa.string())),
        ("name", pa.string()),
        ("value", pa.string()),
    ]
)
"""One row per dynamic config and per client quota value the metadata holds.

``resource_type`` is ``topic``, ``broker`` or ``client_quota``. A topic's row names the topic,
a broker's the broker id, or ``""`` for the cluster-wide default. A client quota's
``resource_name`` shows its entity as ``user=alice,client-id=<default>`` and ``entity`` holds
it as a map (a null name is the type's default entity); ``value`` is the quota as a decimal
number. ``entity`` is null for topic and broker rows."""

SCHEMAS: dict[str, pa.Schema] = {
    "partitions": PARTITIONS,
    "brokers": BROKERS,
    "topics": TOPICS,
    "events": EVENTS,
    "configs": CONFIGS,
}

_SPARK_TYPES = {
    pa.string(): "STRING",
    pa.int32(): "INT",
    pa.int64(): "BIGINT",
    pa.bool_(): "BOOLEAN",
}


def spark_type(arrow_type: pa.DataType) -> str:
    """An Arrow type of these schemas in Spark DDL, e.g. ``ARRAY<INT>``."""
    if pa.types.is_list(arrow_type):
        return f"ARRAY<{spark_type(arrow_type.value_type)}>"
    if pa.types.is_map(arrow_type):
        return f"MAP<{spark_type(arrow_type.key_type)},{spark_type(arrow_type.item_type)}>"
    return _SPARK_TYPES[arrow_type]


def spark_ddl(kind: str, columns: Sequence[str] | None = None) -> str:
    """The Spark schema of ``kind`` as a DDL string, e.g. ``cluster STRING, ...``; with
    ``columns``, of those columns only, in the order given."""
    schema = SCHEMAS[kind]
    fields = list(schema) if columns is None else [schema.field(name) for name in columns]
    return ", ".join(f"`{field.name}` {spark_type(field.type)}" for field in fields)
