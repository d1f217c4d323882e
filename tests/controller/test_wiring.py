"""ElectLeaders through the queue, snapshot loading, settings and the RaftClient adapter."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from raftmeta.common.brokers import AlterPartitionRequest, IsrMember, PartitionIsrChange
from raftmeta.common.elections import ElectionType, TopicPartition
from raftmeta.common.topics import NewTopic
from raftmeta.config.node import parse_config
from raftmeta.controller import (
    ControllerSettings,
    NotControllerError,
    QuorumController,
    RaftClientLog,
)
from raftmeta.controller.log import RaftAppender
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.quorum.client import Listener, RaftClient
from raftmeta.raft.batch import SnapshotId
from raftmeta.records import NoOpRecord, encode_each
from raftmeta.storage.snapshots import SnapshotReader, SnapshotWriter
from tests.controller.harness import CLUSTER_ID, NODE_ID, FakeClock, FakeLog, Harness, run_async
from tests.support.waiting import wait_until_async


@run_async
async def test_preferred_election_moves_leader_back() -> None:
    h = Harness()
    await h.start()
    epochs = await h.add_brokers(2)
    [created] = await h.run(h.controller.create_topics([NewTopic("t", assignments={0: (1, 2)})]))
    await h.heartbeat(1, epochs[1], want_fence=True)
    await h.heartbeat(1, epochs[1])
    # Broker 1 is back but not in the ISR yet; the leader (2) adds it.
    partition = h.controller.committed_image.partition(created.topic_id, 0)
    assert partition is not None and partition.leader == 2
    change = PartitionIsrChange(
        0, partition.leader_epoch, (IsrMember(2), IsrMember(1)), partition.partition_epoch
    )
    await h.run(
        h.controller.alter_partition(
            AlterPartitionRequest(2, epochs[2], created.topic_id, (change,))
        )
    )
    [topic_results] = await h.run(
        h.controller.elect_leaders(ElectionType.PREFERRED, [TopicPartition("t", 0)])
    )
    assert topic_results.partitions[0][1].error is ErrorCode.NONE
    partition = h.log.replay_all().partition(created.topic_id, 0)
    assert partition is not None and partition.leader == 1
    [again] = await h.run(
        h.controller.elect_leaders(ElectionType.PREFERRED, [TopicPartition("t", 0)])
    )
    assert again.partitions[0][1].error is ErrorCode.ELECTION_NOT_NEEDED
    with pytest.raises(KafkaError) as raised:
        # The type is parsed where the request enters; the controller never sees the int.
        await h.controller.elect_leaders(ElectionType.from_request(5), None)
    assert raised.value.code is ErrorCode.INVALID_REQUEST
    await h.stop()


@run_async
async def test_not_controller_carries_leader_id() -> None:
    h = Harness()
    await h.start()
    h.log.lose_leadership(42)
    with pytest.raises(NotControllerError) as raised:
        await h.controller.delete_topics(["t"])
    assert raised.value.leader_id == 42 and raised.value.code is ErrorCode.NOT_CONTROLLER
    await h.stop()


def test_snapshot_load_replaces_state(tmp_path: Path) -> None:
    @run_async
    async def body() -> None:
        h = Harness()
        await h.start()
        await h.add_brokers(2)
        await h.run(h.controller.create_topics([NewTopic("t", 3, 2)]))
        image = h.controller.committed_image
        end_offset = h.log.next_offset()
        writer = SnapshotWriter(tmp_path, SnapshotId(end_offset, 1), cluster_id=CLUSTER_ID)
        writer.append(encode_each(image.to_records()))
        reader = SnapshotReader(writer.freeze())

        log = FakeLog()
        standby = QuorumController(ControllerSettings(NODE_ID, CLUSTER_ID), log, clock=FakeClock())
        log.controller = standby
        standby.handle_load_snapshot(reader)
        assert standby.committed_image.digest() == image.digest()
        assert standby.committed_image.offset == end_offset - 1
        await h.stop()

    body()


def test_settings_from_config() -> None:
    config = parse_config(
        {
            "node.id": 2,
            "controller.quorum.voters": "1@127.0.0.1:9093,2@127.0.0.1:9094,3@127.0.0.1:9095",
            "metadata.log.dir": "/tmp/unused",
            "broker.session.timeout.ms": 12_000,
            "num.partitions": 6,
            "unclean.leader.election.enable": True,
        }
    )
    settings = ControllerSettings.from_config(config, "abc")
    assert (settings.node_id, settings.cluster_id) == (2, "abc")
    assert settings.broker_session_timeout_ms == 12_000 and settings.num_partitions == 6
    assert settings.unclean_leader_election_enable
    assert settings.metadata_max_idle_interval_ms == 500
    assert settings.appends_in_flight == 1  # the shipped default: group commit on
    assert settings.append_linger_max_ms == 5  # and the adaptive wait, capped at 5 ms


@pytest.mark.parametrize(("value", "expected"), [(0, None), (3, 3)])
def test_appends_in_flight_from_config(value: int, expected: int | None) -> None:
    config = parse_config(
        {
            "node.id": 1,
            "controller.quorum.voters": "1@127.0.0.1:9093",
            "metadata.log.dir": "/tmp/unused",
            "controller.append.max.in.flight": value,
        }
    )
    # 0 appends each request's records as it runs: no limit on appends in flight.
    assert ControllerSettings.from_config(config, "abc").appends_in_flight == expected


def test_append_linger_max_from_config() -> None:
    config = parse_config(
        {
            "node.id": 1,
            "controller.quorum.voters": "1@127.0.0.1:9093",
            "metadata.log.dir": "/tmp/unused",
            "controller.append.linger.max.ms": 0,
        }
    )
    assert ControllerSettings.from_config(config, "abc").append_linger_max_ms == 0


class _Client:
    """Only what RaftClientLog reads: the epoch, the log's end, and an append that lingers."""

    def __init__(self) -> None:
        self.current_epoch = 1
        self.end_offset = 10
        self.promised = 10

    def epoch(self) -> int:
        return self.current_epoch

    def log_end_offset(self) -> int:
        return self.end_offset

    def append(self, records: Sequence[bytes]) -> tuple[int, asyncio.Future[int]]:
        self.promised += len(records)
        return self.promised - 1, asyncio.get_running_loop().create_future()


@run_async
async def test_raft_client_log_counts_promised_offsets() -> None:
    client = _Client()
    adapter = RaftClientLog(client)
    assert adapter.next_offset() == 10
    last, _ = adapter.append([b"a", b"b"])
    assert last == 11
    assert adapter.next_offset() == 12, "the batch still lingers; the log end is still 10"
    client.end_offset = 15  # flushed, plus a control record
    assert adapter.next_offset() == 15
    client.current_epoch = 2
    client.end_offset = 13  # a new epoch truncated the tail
    assert adapter.next_offset() == 13


def _raft_client_is_an_appender(client: RaftClient) -> RaftAppender:
    """Checked by mypy: the composition root can hand a RaftClient to RaftClientLog."""
    return client


def test_controller_is_a_raft_listener() -> None:
    controller = QuorumController(
        ControllerSettings(NODE_ID, CLUSTER_ID), FakeLog(), clock=FakeClock()
    )
    listener: Listener = controller  # checked by mypy: the three callbacks RaftClient makes
    assert listener is controller


@run_async
async def test_timer_runs_periodic_work() -> None:
    h = Harness()
    h.controller.start(tick_interval_ms=5)
    h.log.become_leader()
    before = len(h.log.batches)
    h.clock.advance(600)
    await wait_until_async(
        lambda: len(h.log.batches) > before, "the timer to append", 2.0, pause_s=0.005
    )
    assert h.log.uncommitted_records() == [NoOpRecord()]
    await h.stop()
