"""The embedded broker against a real in-process quorum: registration, fencing, the replayed
image, subscriptions, controlled shutdown and re-registration."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from raftmeta.broker import Broker, BrokerState, LeadershipChange, PartitionChange
from raftmeta.channel import ControllerChannel
from raftmeta.common.brokers import IsrMember, PartitionIsrChange
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.rpc import broker_pb2
from raftmeta.storage import MetadataDir
from tests.support.broker_quorum import CLUSTER_ID, DEADLINE_S, BrokerQuorum
from tests.support.scenario import run_scenario
from tests.support.waiting import wait_until_async


async def described_brokers(quorum: BrokerQuorum) -> dict[int, tuple[bool, str, int]]:
    response = await quorum.describe_cluster()
    return {b.broker_id: (b.fenced, b.rack, b.broker_epoch) for b in response.brokers}


@dataclass(eq=False)
class Seen:
    """Everything one broker's subscriptions reported."""

    states: list[BrokerState] = field(default_factory=list)
    changes: list[PartitionChange] = field(default_factory=list)
    leadership: list[LeadershipChange] = field(default_factory=list)

    def subscribe(self, broker: Broker) -> None:
        self.states.append(broker.state)
        broker.on_state_change(self.state_changed)
        broker.on_partition_change(self.partitions_changed)
        broker.on_leadership_change(self.leadership.append)

    def state_changed(self, old: BrokerState, new: BrokerState) -> None:
        self.states.append(new)

    def partitions_changed(self, offset: int, changes: Sequence[PartitionChange]) -> None:
        self.changes.extend(changes)


def running(broker: Broker) -> Callable[[], bool]:
    return lambda: broker.state is BrokerState.RUNNING


def led_by(broker: Broker, topic_id: bytes, broker_id: int) -> set[int]:
    topic = broker.image.topic(topic_id)
    assert topic is not None
    return {p for p, r in topic.partitions.items() if r.leader == broker_id}


def in_isr_of(broker: Broker, topic_id: bytes, broker_id: int) -> set[int]:
    topic = broker.image.topic(topic_id)
    assert topic is not None
    return {p for p, r in topic.partitions.items() if broker_id in r.isr}


def test_brokers_register_fenced_unfence_when_caught_up_and_replay_the_image(
    tmp_path: Path,
) -> None:
    async def scenario(quorum: BrokerQuorum) -> None:
        seen: dict[int, Seen] = {}
        brokers: list[Broker] = []
        for broker_id in (1, 2, 3):
            broker = await quorum.start_broker(broker_id, rack=f"r{broker_id % 3}")
            seen[broker_id] = Seen()
            seen[broker_id].subscribe(broker)
            brokers.append(broker)
        for broker in brokers:
            await broker.wait_for(running(broker), DEADLINE_S)
            assert seen[broker.broker_id].states[:3] == [
                BrokerState.STARTING,
                BrokerState.RECOVERY,
                BrokerState.RUNNING,
            ]
            assert broker.broker_epoch is not None
            assert broker.metadata_offset >= broker.broker_epoch
        described = await described_brokers(quorum)
        assert described == {
            b.broker_id: (False, f"r{b.broker_id % 3}", b.broker_epoch) for b in brokers
        }

        topic_id = await quorum.create_topic("orders", partitions=6, replication_factor=3)
        for broker in brokers:
            await quorum.wait_for_image(broker)
            topic = broker.image.topic(topic_id)
            assert topic is not None and topic.name == "orders"
            assert len(topic.partitions) == 6
        for broker in brokers:
            created = [c for c in seen[broker.broker_id].changes if c.topic_id == topic_id]
            assert sorted(c.partition_id for c in created) == list(range(6))
            assert all(c.before is None and c.after is not None for c in created)
            led = led_by(brokers[0], topic_id, broker.broker_id)
            gained = {c.partition_id for ch in seen[broker.broker_id].leadership for c in ch.gained}
            assert gained == led and led

    run_scenario(scenario, BrokerQuorum(tmp_path))


class HeartbeatSwitch:
    """A controller channel whose heartbeats the test can cut off, as a network would."""

    def __init__(self, inner: ControllerChannel) -> None:
        self.inner = inner
        self.blocked = False

    async def call(self, method: str, request: Any, *, timeout_ms: int | None = None) -> Any:
        if self.blocked and method == "BrokerLifecycle/BrokerHeartbeat":
            raise KafkaError(ErrorCode.REQUEST_TIMED_OUT, "heartbeats cut off by the test")
        return await self.inner.call(method, request, timeout_ms=timeout_ms)

    async def close(self) -> None:
        await self.inner.close()


async def start_three(quorum: BrokerQuorum, switch: HeartbeatSwitch | None = None) -> list[Broker]:
    brokers = [
        await quorum.start_broker(i, rack=f"r{i}", channel=switch if i == 1 else None)
        for i in (1, 2, 3)
    ]
    for broker in brokers:
        await broker.wait_for(running(broker), DEADLINE_S)
    return brokers


def test_a_broker_whose_heartbeats_stop_is_fenced_loses_its_leaderships_and_comes_back(
    tmp_path: Path,
) -> None:
    async def scenario(quorum: BrokerQuorum) -> None:
        switch = HeartbeatSwitch(ControllerChannel(quorum.bootstrap_servers))
        one, two, _ = await start_three(quorum, switch)
        states: list[BrokerState] = []
        one.on_state_change(lambda old, new: states.append(new))
        topic_id = await quorum.create_topic("events", partitions=6, replication_factor=3)
        await quorum.wait_for_image(two)
        assert led_by(two, topic_id, 1) and in_isr_of(two, topic_id, 1) == set(range(6))
        epoch = one.broker_epoch

        switch.blocked = True
        await two.wait_for(lambda: not led_by(two, topic_id, 1), DEADLINE_S)
        await two.wait_for(lambda: not in_isr_of(two, topic_id, 1), DEADLINE_S)
        assert (await described_brokers(quorum))[1][0] is True
        # The fenced broker learns it from the log it still follows.
        await one.wait_for(lambda: one.state is BrokerState.RECOVERY, DEADLINE_S)

        switch.blocked = False
        await one.wait_for(lambda: one.state is BrokerState.RUNNING, DEADLINE_S)
        assert one.broker_epoch == epoch
        assert (await described_brokers(quorum))[1][0] is False
        assert states[:2] == [BrokerState.RECOVERY, BrokerState.RUNNING]

    run_scenario(scenario, BrokerQuorum(tmp_path))


def test_controlled_shutdown_moves_leaderships_away_first(tmp_path: Path) -> None:
    async def scenario(quorum: BrokerQuorum) -> None:
        one, two, three = await start_three(quorum)
        topic_id = await quorum.create_topic("logs", partitions=6, replication_factor=2)
        await quorum.wait_for_image(two)
        leading = led_by(two, topic_id, 2)
        assert leading
        lost: set[int] = set()
        two.on_leadership_change(lambda change: lost.update(c.partition_id for c in change.lost))

        assert await two.controlled_shutdown(DEADLINE_S)
        assert two.state is BrokerState.SHUTTING_DOWN
        # Every other broker has seen the moves before the controller let it go.
        for other in (one, three):
            assert not led_by(other, topic_id, 2)
        await two.wait_for(lambda: lost == leading, DEADLINE_S)
        await two.stop()
        assert two.state is BrokerState.NOT_RUNNING
        assert (await described_brokers(quorum))[2][0] is True

    run_scenario(scenario, BrokerQuorum(tmp_path))


def test_a_restarted_broker_registers_a_new_incarnation_and_is_unfenced(tmp_path: Path) -> None:
    async def scenario(quorum: BrokerQuorum) -> None:
        _, _, three = await start_three(quorum)
        old_epoch = three.broker_epoch
        assert old_epoch is not None
        await three.stop()
        # Until the old session expires the new incarnation is refused as a duplicate; the
        # broker keeps trying and gets in once it has.
        again = await quorum.start_broker(3, rack="r3")
        await again.wait_for(lambda: again.state is BrokerState.RUNNING, DEADLINE_S)
        assert again.broker_epoch is not None and again.broker_epoch > old_epoch
        assert again.incarnation_id != three.incarnation_id
        assert (await described_brokers(quorum))[3] == (False, "r3", again.broker_epoch)

    run_scenario(scenario, BrokerQuorum(tmp_path))


def test_a_broker_told_its_epoch_is_stale_registers_again(tmp_path: Path) -> None:
    async def scenario(quorum: BrokerQuorum) -> None:
        one, _, _ = await start_three(quorum)
        old_epoch = one.broker_epoch
        assert old_epoch is not None
        states: list[BrokerState] = []
        one.on_state_change(lambda old, new: states.append(new))
        response = await quorum.channel.call(
            "BrokerLifecycle/UnregisterBroker", broker_pb2.UnregisterBrokerRequest(broker_id=1)
        )
        assert response.header.error_code == 0
        await one.wait_for(
            lambda: one.state is BrokerState.RUNNING and one.broker_epoch != old_epoch, DEADLINE_S
        )
        assert one.broker_epoch is not None and one.broker_epoch > old_epoch
        assert BrokerState.STARTING in states
        assert (await described_brokers(quorum))[1][0] is False

    run_scenario(scenario, BrokerQuorum(tmp_path))


def test_a_late_broker_catches_up_from_a_snapshot_and_hears_of_every_partition(
    tmp_path: Path,
) -> None:
    async def scenario(quorum: BrokerQuorum) -> None:
        (first,) = [await quorum.start_broker(1, rack="r1")]
        await first.wait_for(running(first), DEADLINE_S)
        topic_id = await quorum.create_topic("early", partitions=8, replication_factor=1)
        controller_dirs = [quorum.root / f"node-{n}" for n in quorum.controllers]
        await wait_until_async(
            lambda: all(any(d.rglob("*.checkpoint")) for d in controller_dirs),
            "a snapshot in every controller's directory",
            DEADLINE_S,
        )
        late = Seen()
        broker = Broker(quorum.broker_settings(2, "r2"))
        MetadataDir.format(broker.settings.data_dir, 2, CLUSTER_ID)
        late.subscribe(broker)
        await broker.start()
        quorum.brokers[2] = broker
        await broker.wait_for(running(broker), DEADLINE_S)
        await quorum.wait_for_image(broker)
        # It fetched the controllers' snapshot rather than a log they no longer hold.
        assert any(broker.settings.data_dir.rglob("*.checkpoint"))
        created = {c.partition_id for c in late.changes if c.topic_id == topic_id}
        assert created == set(range(8))

    run_scenario(scenario, BrokerQuorum(tmp_path, snapshot_bytes=256))


def test_a_leader_shrinks_an_isr_with_alter_partition_and_a_stale_epoch_is_refused(
    tmp_path: Path,
) -> None:
    async def scenario(quorum: BrokerQuorum) -> None:
        brokers = {b.broker_id: b for b in await start_three(quorum)}
        topic_id = await quorum.create_topic("isr", partitions=1, replication_factor=3)
        await quorum.wait_for_image(brokers[1])
        partition = brokers[1].image.partition(topic_id, 0)
        assert partition is not None
        leader = brokers[partition.leader]
        follower = next(r for r in partition.replicas if r != leader.broker_id)
        epochs = {b.broker_id: b.broker_epoch or -1 for b in brokers.values()}
        shrink = PartitionIsrChange(
            partition_id=0,
            leader_epoch=partition.leader_epoch,
            new_isr=tuple(IsrMember(b, epochs[b]) for b in (leader.broker_id, follower)),
            partition_epoch=partition.partition_epoch,
        )
        (result,) = await leader.alter_partition(topic_id, [shrink])
        assert result.error.ok, result.error
        assert set(result.isr) == {leader.broker_id, follower}
        assert result.partition_epoch == partition.partition_epoch + 1

        def shrunk() -> bool:
            # The leader's own image may not even hold the topic yet: only brokers[1] was
            # waited for.
            seen = leader.image.partition(topic_id, 0)
            return seen is not None and set(seen.isr) == {leader.broker_id, follower}

        await leader.wait_for(shrunk, DEADLINE_S)
        # The same proposal again names a partition epoch that is no longer current.
        (stale,) = await leader.alter_partition(topic_id, [shrink])
        assert stale.error.code is ErrorCode.INVALID_UPDATE_VERSION, stale.error

    run_scenario(scenario, BrokerQuorum(tmp_path))
