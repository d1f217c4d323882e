"""Issue 5's acceptance: leader elections driven through ``raftmeta leader-election`` as a user
runs it, against a real quorum (three in-process controllers) and six embedded brokers on three
racks.

Embedded brokers hold no partition data, so a replica's catching up is what a real partition
leader would report once its follower has the log: the test has the leader broker send
AlterPartition adding the replica back to the ISR.

The tool runs in-process through ``raftmeta.cli.main`` (on a worker thread, since the quorum
shares the test's event loop) and once as a real process.
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
import time
from collections.abc import Callable, Iterable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

from raftmeta.broker import Broker, BrokerState
from raftmeta.cli.main import main
from raftmeta.common.brokers import IsrMember, PartitionIsrChange
from raftmeta.common.elections import TopicPartition
from raftmeta.errors import ErrorCode
from raftmeta.image import MetadataImage, PartitionRegistration
from raftmeta.raft.config import RaftConfig
from raftmeta.records import NO_LEADER, LeaderRecoveryState
from raftmeta.rpc import admin_pb2
from tests.support.broker_quorum import BrokerQuorum, Timings
from tests.support.scenario import run_scenario
from tests.support.waiting import wait_until_async

RACKS = {1: "r0", 2: "r1", 3: "r2", 4: "r0", 5: "r1", 6: "r2"}
GUEST_TOKEN = "guest-token"
HEARTBEAT_MS = 100
SESSION_TIMEOUT_MS = 1500
"""How long a killed broker takes to be fenced; long enough that a loaded machine does not
fence live brokers whose heartbeats are late."""
RAFT = RaftConfig(election_timeout_ms=400, fetch_timeout_ms=1500, fetch_max_wait_ms=100)
"""Slower to fail over than the broker tests' settings: no controller dies here, and a busy
machine must not make the quorum change leaders in the middle of a scenario."""
CALL_TIMEOUT_MS = 10_000


class ElectionQuorum(BrokerQuorum):
    """The broker tests' quorum with slower timeouts and extra controller settings."""

    def __init__(self, root: Path, settings: dict[str, Any]) -> None:
        super().__init__(
            root,
            timings=Timings(RAFT, HEARTBEAT_MS, SESSION_TIMEOUT_MS),
            controller_config=settings,
        )

    def active_image(self) -> MetadataImage | None:
        """The active controller's committed image; None while no controller is active."""
        for node in self.controllers.values():
            controller = node.maybe_controller
            if controller is not None and controller.is_active:
                return controller.committed_image
        return None

    def image(self) -> MetadataImage:
        image = self.active_image()
        assert image is not None, "no active controller"
        return image

    def partition(self, topic: str, partition_id: int) -> PartitionRegistration:
        image = self.image()
        topic_image = image.topic_by_name(topic)
        assert topic_image is not None
        return topic_image.partitions[partition_id]

    def partitions(self, topic: str) -> dict[int, PartitionRegistration]:
        topic_image = self.image().topic_by_name(topic)
        assert topic_image is not None
        return dict(topic_image.partitions)

    def topic_id(self, topic: str) -> bytes:
        topic_image = self.image().topic_by_name(topic)
        assert topic_image is not None
        return topic_image.topic_id

    async def wait(self, predicate: Callable[[], bool], what: str, timeout_s: float = 15.0) -> None:
        await wait_until_async(predicate, what, timeout_s)

    async def start_brokers(self, ids: Iterable[int]) -> None:
        for broker_id in ids:
            await self.start_broker(broker_id, RACKS[broker_id])
        await self.wait(
            lambda: all(self.running(b) for b in self.brokers), "every broker to be running"
        )

    def running(self, broker_id: int) -> bool:
        broker = self.brokers.get(broker_id)
        image = self.active_image()
        registration = None if image is None else image.broker(broker_id)
        return (
            broker is not None
            and broker.state is BrokerState.RUNNING
            and registration is not None
            and not registration.fenced
        )

    async def kill(self, broker_id: int) -> None:
        """Stop a broker without a controlled shutdown and wait for its session to expire."""
        broker = self.brokers.pop(broker_id)
        await broker.stop()

        def fenced_and_leading_nothing() -> bool:
            image = self.active_image()
            if image is None:
                return False
            registration = image.broker(broker_id)
            return (
                registration is not None
                and registration.fenced
                and image.leader_count(broker_id) == 0
            )

        await self.wait(
            fenced_and_leading_nothing, f"broker {broker_id} to be fenced and lead nothing"
        )

    async def catch_up(self, broker_id: int, topic: str, partition_ids: Iterable[int]) -> None:
        """What a partition leader does once a follower has caught up: add it to the ISR."""
        topic_id = self.topic_id(topic)
        for partition_id in partition_ids:
            partition = self.partition(topic, partition_id)
            assert broker_id not in partition.isr and partition.leader != NO_LEADER
            leader: Broker = self.brokers[partition.leader]
            members = (*partition.isr, broker_id)
            [result] = await leader.alter_partition(
                topic_id,
                [
                    PartitionIsrChange(
                        partition_id,
                        partition.leader_epoch,
                        tuple(IsrMember(m, self.brokers[m].broker_epoch or -1) for m in members),
                        partition.partition_epoch,
                    )
                ],
                timeout_ms=CALL_TIMEOUT_MS,
            )
            assert result.error.code is ErrorCode.NONE, result

    async def create_assigned(self, topic: str, replicas: tuple[int, ...]) -> None:
        request = admin_pb2.CreateTopicsRequest(
            topics=[
                admin_pb2.NewTopic(
                    name=topic,
                    num_partitions=-1,
                    replication_factor=-1,
                    assignments={0: admin_pb2.BrokerIds(broker_ids=list(replicas))},
                )
            ]
        )
        response = await self.channel.call(
            "Admin/CreateTopics", request, timeout_ms=CALL_TIMEOUT_MS
        )
        assert response.header.error_code == 0 and response.topics[0].error_code == 0, response


async def leader_election(*args: str) -> tuple[int, list[str], str]:
    """``raftmeta leader-election ARGS`` in this process: exit status, stdout lines, stderr."""

    def call() -> tuple[int, list[str], str]:
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            status = main(["leader-election", *args])
        return status, out.getvalue().splitlines(), err.getvalue()

    return await asyncio.to_thread(call)


async def leader_election_process(*args: str) -> tuple[int, list[str], str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "raftmeta",
        "leader-election",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode().splitlines(), err.decode()


def names(partitions: Iterable[TopicPartition]) -> str:
    return ", ".join(str(tp) for tp in sorted(partitions))


def preferred_of(quorum: ElectionQuorum, topic: str, broker_id: int) -> list[int]:
    return sorted(
        partition_id
        for partition_id, partition in quorum.partitions(topic).items()
        if partition.replicas[0] == broker_id
    )


def test_leader_election_tool_end_to_end(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{GUEST_TOKEN}=User:guest\n")
    settings = {
        "auto.leader.rebalance.enable": False,
        "authorizer.class.name": "raftmeta.auth.AclAuthorizer",
        "super.users": "User:ANONYMOUS",
        "raftmeta.auth.tokens.file": str(tokens),
    }

    async def scenario(quorum: ElectionQuorum) -> None:
        await quorum.start_brokers(RACKS)
        await quorum.create_topic("orders", partitions=12, replication_factor=3)
        bootstrap = ("--bootstrap-server", quorum.bootstrap_servers)
        preferred = ("--election-type", "preferred")
        everything = (*bootstrap, *preferred, "--all-topic-partitions")
        assert not quorum.image().partitions_not_led_by_preferred

        # 1. Broker 1 dies: its leaderships move. Back and caught up, one preferred election
        #    of every partition returns exactly those; a second finds nothing to do.
        led_by_1 = preferred_of(quorum, "orders", 1)
        assert led_by_1
        await quorum.kill(1)
        assert all(quorum.partition("orders", p).leader not in (1, NO_LEADER) for p in led_by_1)
        await quorum.start_brokers([1])
        behind = [p for p, part in quorum.partitions("orders").items() if 1 in part.replicas]
        await quorum.catch_up(1, "orders", behind)
        status, lines, err = await leader_election(*everything)
        moved = [TopicPartition("orders", p) for p in led_by_1]
        assert (status, err) == (0, "")
        assert lines == [
            f"Successfully completed leader election (PREFERRED) for partitions {names(moved)}"
        ]
        assert all(quorum.partition("orders", p).leader == 1 for p in led_by_1)
        assert not quorum.image().partitions_not_led_by_preferred
        assert await leader_election(*everything) == (0, [], "")

        # 2. Partitions already led by their preferred replica: nothing to do, exit 0.
        status, lines, _ = await leader_election(*bootstrap, *preferred, "--topic", "orders")
        assert status == 2  # --partition is missing: a usage error
        election_file = tmp_path / "election.json"
        election_file.write_text(
            json.dumps(
                {
                    "partitions": [
                        {"topic": "orders", "partition": 3},
                        {"topic": "orders", "partition": 0},
                    ]
                }
            )
        )
        status, lines, _ = await leader_election(
            *bootstrap, *preferred, "--path-to-json-file", str(election_file)
        )
        assert (status, lines) == (
            0,
            ["Valid replica already elected for partitions orders-0, orders-3"],
        )

        # 3. The preferred replica is down: PREFERRED_LEADER_NOT_AVAILABLE, exit 1 (this run
        #    as a real process).
        [of_2, *_] = preferred_of(quorum, "orders", 2)
        await quorum.kill(2)
        status, lines, err = await leader_election_process(
            *bootstrap, *preferred, "--topic", "orders", "--partition", str(of_2)
        )
        assert status == 1
        assert lines == [
            f"Error completing leader election (PREFERRED) for partition: orders-{of_2}: "
            "PREFERRED_LEADER_NOT_AVAILABLE: "
            f"Failed to elect leader for partition orders-{of_2} under strategy PREFERRED"
        ]
        assert err.strip().endswith("1 replica(s) could not be elected")
        assert "Traceback" not in err

        # 4. Every ISR member of a partition is down and one out-of-sync replica lives:
        #    UNCLEAN elects it alone, RECOVERING, with the leader epoch one up.
        await quorum.create_assigned("fragile", (4, 5, 6))
        await quorum.wait(
            lambda: quorum.partition("fragile", 0).leader == 4, "broker 4 to lead fragile-0"
        )
        leader_4 = quorum.brokers[4]
        start = quorum.partition("fragile", 0)
        [shrunk] = await leader_4.alter_partition(
            quorum.topic_id("fragile"),
            [
                PartitionIsrChange(
                    0,
                    start.leader_epoch,
                    tuple(IsrMember(b, quorum.brokers[b].broker_epoch or -1) for b in (4, 5)),
                    start.partition_epoch,
                )
            ],
            timeout_ms=CALL_TIMEOUT_MS,
        )
        assert shrunk.error.code is ErrorCode.NONE and shrunk.isr == (4, 5)
        await quorum.kill(4)
        await quorum.kill(5)
        leaderless = quorum.partition("fragile", 0)
        assert leaderless.leader == NO_LEADER and 6 not in leaderless.isr
        unclean = ("--election-type", "UNCLEAN")
        fragile = ("--topic", "fragile", "--partition", "0")
        status, lines, _ = await leader_election(*bootstrap, *unclean, *fragile)
        assert (status, lines) == (
            0,
            ["Successfully completed leader election (UNCLEAN) for partitions fragile-0"],
        )
        elected = quorum.partition("fragile", 0)
        assert elected.leader == 6 and elected.isr == (6,)
        assert elected.leader_recovery_state == LeaderRecoveryState.RECOVERING
        assert elected.leader_epoch == leaderless.leader_epoch + 1
        # It has a leader now: ELECTION_NOT_NEEDED, which the tool reports as already valid.
        status, lines, _ = await leader_election(*bootstrap, *unclean, *fragile)
        assert (status, lines) == (0, ["Valid replica already elected for partitions fragile-0"])

        # 5. A principal without ALTER on the cluster is refused; a timeout is reported as one.
        guest = tmp_path / "guest.properties"
        guest.write_text(f"bearer.token={GUEST_TOKEN}\n")
        status, lines, _ = await leader_election(*everything, "--admin.config", str(guest))
        assert (status, lines) == (1, ["Not authorized to perform leader election"])
        impatient = tmp_path / "impatient.properties"
        impatient.write_text("default.api.timeout.ms=0\n")
        status, lines, _ = await leader_election(*everything, "--admin.config", str(impatient))
        assert (status, lines) == (1, ["Timeout waiting for election results"])
        nobody = tmp_path / "nobody.properties"
        nobody.write_text("request.timeout.ms=300\n")
        closed_port = ("--bootstrap-server", "127.0.0.1:1")
        status, lines, _ = await leader_election(
            *closed_port, *preferred, "--all-topic-partitions", "--admin.config", str(nobody)
        )
        assert (status, lines) == (1, ["Timeout waiting for election results"])

    run_scenario(scenario, ElectionQuorum(tmp_path, settings), timeout_s=90)


def test_auto_rebalance_honours_threshold_and_catch_up_gate(tmp_path: Path) -> None:
    catch_up_ms = 2500
    settings = {
        "auto.leader.rebalance.enable": True,
        "leader.imbalance.check.interval.seconds": 1,
        "leader.imbalance.per.broker.percentage": 60,
        "leader.imbalance.catch.up.ms": catch_up_ms,
    }

    async def scenario(quorum: ElectionQuorum) -> None:
        await quorum.start_brokers(RACKS)
        await quorum.create_topic("orders", partitions=12, replication_factor=3)
        first, second = preferred_of(quorum, "orders", 1)

        await quorum.kill(1)
        restarted_at = time.monotonic()  # no later than the broker's unfencing
        await quorum.start_brokers([1])
        await quorum.catch_up(1, "orders", [first])
        # Broker 1 leads none of its 2 partitions (100% > 60%), but it came back less than
        # leader.imbalance.catch.up.ms ago: no leadership yet.
        gate_ends = restarted_at + catch_up_ms / 1000
        while time.monotonic() < gate_ends - 0.1:
            assert quorum.partition("orders", first).leader != 1, "moved inside the gate"
            await asyncio.sleep(0.05)
        # After the gate, the next run moves it.
        await quorum.wait(
            lambda: quorum.partition("orders", first).leader == 1,
            f"broker 1 to lead orders-{first} again",
        )

        # Now 1 of 2 (50%) is not led by broker 1: below the 60% threshold, so the second
        # partition stays where it is over several runs even with broker 1 in its ISR.
        await quorum.catch_up(1, "orders", [second])
        watch_until = time.monotonic() + 2.5
        while time.monotonic() < watch_until:
            assert quorum.partition("orders", second).leader != 1, "moved below the threshold"
            await asyncio.sleep(0.05)
        assert TopicPartition("orders", second) not in {
            TopicPartition("orders", p)
            for p, part in quorum.partitions("orders").items()
            if part.leader == part.replicas[0]
        }

    run_scenario(scenario, ElectionQuorum(tmp_path, settings), timeout_s=60)
