"""A partition reassignment across real processes: three ``raftmeta serve`` controllers and
four ``raftmeta broker`` stand-ins, which report a new replica caught up after
``replica.catch.up.delay.ms``.

Every partition of a topic on brokers 1-3 moves one replica to broker 4 in one request; the
active controller and broker 4 are then killed with ``kill -9`` while the moves are under way.
Once both are back, every move must complete, and every state the metadata log ever committed
must be valid: the ISR within the replicas, the leader in the ISR, never leaderless.

The suite moves 200 partitions; ``RAFTMETA_REASSIGN_PARTITIONS=1000`` runs the acceptance size.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from raftmeta.admin import AsyncAdminClient, NewTopic, TopicPartition
from raftmeta.admin.types import ClusterDescription, TopicDescription
from raftmeta.cli.dump import segment_files
from raftmeta.devkit.cluster import DevCluster, stop_all
from raftmeta.image import MetadataImage, PartitionRegistration
from raftmeta.records import PartitionChangeRecord, PartitionRecord, decode_record
from raftmeta.storage.codec import scan_batches
from tests.process.helpers import DEADLINE_S, SCENARIO_TIMEOUT_S, free_base_port
from tests.support.scenario import run_with_deadline
from tests.support.waiting import wait_until_async

PARTITIONS = int(os.environ.get("RAFTMETA_REASSIGN_PARTITIONS", "200"))
TOPIC = "moving"
TARGET_BROKER = 4
CATCH_UP_DELAY_MS = 5000
"""Long enough that the kills land while the moves are under way, and that the killed target
broker is fenced (its session, 2 s, runs out after the controller failover) before the
partition leaders would count it caught up: a stand-in cannot tell a dead replica from a slow
one, only the fencing can."""
OVERRIDES = {
    "broker.heartbeat.interval.ms": "250",
    "broker.session.timeout.ms": "2000",
    "replica.catch.up.delay.ms": str(CATCH_UP_DELAY_MS),
}
PAUSE_S = 0.1
MOVE_DEADLINE_S = DEADLINE_S * max(1, PARTITIONS // 200)


def original(partition: int) -> list[int]:
    first = partition % 3 + 1
    return [first, first % 3 + 1]


def target(partition: int) -> list[int]:
    """The second replica gives way to broker 4, which comes first (the preferred leader)."""
    return [TARGET_BROKER, original(partition)[0]]


async def scenario(cluster: DevCluster, reached: list[int]) -> None:
    """Appends to ``reached`` the metadata offset the controller had reached once every move
    was done."""
    client = AsyncAdminClient(
        {"bootstrap.servers": cluster.bootstrap_servers, "request.timeout.ms": 5000}
    )
    async with client:

        async def cluster_view() -> ClusterDescription | None:
            for process in [*cluster.nodes.values(), *cluster.brokers.values()]:
                status = process.exit_status
                assert status in (None, -9), f"{process.config.stem} exited with {status}"
            try:
                return await client.describe_cluster()
            except Exception:
                return None  # no active controller right now

        async def unfenced() -> set[int]:
            view = await cluster_view()
            return set() if view is None else {b.id for b in view.brokers if not b.fenced}

        async def all_unfenced() -> bool:
            return await unfenced() == set(cluster.brokers)

        await wait_until_async(
            all_unfenced, "four registered, unfenced brokers", DEADLINE_S, pause_s=PAUSE_S
        )
        created = client.create_topics(
            [NewTopic(TOPIC, replica_assignment=[original(p) for p in range(PARTITIONS)])]
        )
        await created[TOPIC]

        moves = {TopicPartition(TOPIC, p): target(p) for p in range(PARTITIONS)}
        for future in client.alter_partition_reassignments(moves).values():
            await future

        view = await cluster_view()
        assert view is not None
        cluster.nodes[view.controller_id].kill()
        cluster.brokers[TARGET_BROKER].kill()

        async def listed() -> dict[TopicPartition, object] | None:
            try:
                return dict(await client.list_partition_reassignments())
            except Exception:
                return None

        async def some_in_progress() -> bool:
            moving = await listed()
            return moving is not None and len(moving) > 0

        await wait_until_async(
            some_in_progress,
            "the new controller to list moves under way",
            DEADLINE_S,
            pause_s=PAUSE_S,
        )

        async def target_fenced() -> bool:
            view = await cluster_view()
            return view is not None and any(
                b.id == TARGET_BROKER and b.fenced for b in view.brokers
            )

        await wait_until_async(
            target_fenced, f"broker {TARGET_BROKER} to be fenced", DEADLINE_S, pause_s=PAUSE_S
        )
        assert await listed(), "the moves wait for the fenced target broker"
        cluster.nodes[view.controller_id].start()
        cluster.brokers[TARGET_BROKER].start()

        async def all_moved() -> bool:
            if await listed() != {}:
                return False
            try:
                described: TopicDescription = await client.describe_topics([TOPIC])[TOPIC]
            except Exception:
                return False
            return all(
                list(p.replicas) == target(p.id)
                and set(p.isr) == set(p.replicas)
                and p.leader in p.isr
                for p in described.partitions
            )

        await wait_until_async(
            all_moved,
            "every move to complete, broker 4 back in sync",
            MOVE_DEADLINE_S,
            pause_s=PAUSE_S,
        )
        done = await cluster_view()
        assert done is not None
        reached.append(done.metadata_offset)


def invalid(state: PartitionRegistration) -> str | None:
    """What is wrong with a committed partition state, if anything."""
    if not set(state.isr) <= set(state.replicas):
        return "an ISR member is not a replica"
    if state.leader == -1:
        return "leaderless"
    if state.leader not in state.isr:
        return "the leader is not in the ISR"
    return None


def committed_states_are_valid(data_dir: Path, end_offset: int) -> int:
    """Replays a stopped controller's log record by record up to ``end_offset``, checking
    each partition state it makes; returns how many records changed a partition of the topic.
    (The brokers' shutdown after that leaves partitions leaderless, as it should.)"""
    image = MetadataImage()
    checked = 0
    topic_id: bytes | None = None
    for segment in segment_files(data_dir):
        for batch in scan_batches(segment.read_bytes()).batches:
            if batch.is_control:
                continue
            for index, data in enumerate(batch.records()):
                record = decode_record(data)
                offset = batch.base_offset + index
                if offset > end_offset:
                    return checked
                image.apply(record, offset)
                if topic_id is None:
                    found = image.topic_by_name(TOPIC)
                    topic_id = None if found is None else found.topic_id
                if not isinstance(record, PartitionRecord | PartitionChangeRecord):
                    continue
                if record.topic_id != topic_id:
                    continue
                state = image.partition(record.topic_id, record.partition_id)
                assert state is not None
                problem = invalid(state)
                assert problem is None, f"partition {record.partition_id} at {offset}: {problem}"
                checked += 1
    return checked


def test_a_reassignment_completes_across_kill_9_of_the_controller_and_a_target_broker(
    tmp_path: Path,
) -> None:
    cluster = DevCluster(tmp_path, free_base_port(), OVERRIDES, brokers=4)
    cluster.prepare()
    reached: list[int] = []
    try:
        cluster.start()
        cluster.start_brokers()
        run_with_deadline(scenario(cluster, reached), SCENARIO_TIMEOUT_S)
    finally:
        stop_all(list(cluster.brokers.values()))
        stop_all(list(cluster.nodes.values()))
    checked = max(
        committed_states_are_valid(cluster.data_dir(n), reached[0]) for n in cluster.nodes
    )
    # Creation, the start of each move and at least its completion, for every partition.
    assert checked >= 3 * PARTITIONS, checked


def test_the_validity_check_refuses_each_kind_of_invalid_state() -> None:
    """The replay check above must be able to fail."""
    valid = PartitionRegistration((4, 1), (1, 4), (), (), 4, 0, 3, 7)
    assert invalid(valid) is None
    assert invalid(dataclasses.replace(valid, isr=(1, 2))) == "an ISR member is not a replica"
    assert invalid(dataclasses.replace(valid, leader=-1)) == "leaderless"
    assert invalid(dataclasses.replace(valid, isr=(1,))) == "the leader is not in the ISR"
