"""A broker in 30,000 ISRs fenced on a 100,000-partition image, then a kill -9 failover, by
three real ``raftmeta serve`` processes: neither stalls the controller's queue.

The nodes start holding a planted snapshot (written straight from records, so it takes a
second or two to make): broker 1, unfenced, leads 30,000 partitions; brokers 2 and 3 are
fenced and hold the rest. Nothing heartbeats, so once broker 1's session expires the active
controller fences it: 30,000 elections, which written as one event hold the queue for seconds
(every heartbeat of a real cluster would wait behind them). Written in slices, no event may
cost more than ``HOLD_BOUND_S`` of the loop's CPU, read from the node's own metric
(``raftmeta_controller_event_max_hold_cpu_seconds``). Then the active controller is killed: the
new one must take over without a long hold either (activation copies nothing) and commit a
write soon after.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import time
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from raftmeta.admin import AlterConfigOpType, AsyncAdminClient, ConfigEntry, ConfigResource
from raftmeta.devkit.ports import free_ports
from raftmeta.raft.batch import SnapshotId
from raftmeta.records import (
    BrokerEndpoint,
    PartitionRecord,
    Record,
    RegisterBrokerRecord,
    SecurityProtocol,
    TopicRecord,
    encode_each,
)
from raftmeta.storage.data_dir import METADATA_PARTITION_DIR
from raftmeta.storage.snapshots import SnapshotWriter
from tests.process.helpers import ProcessQuorum, running
from tests.support.waiting import wait_until

TOPICS = 100
PER_TOPIC = 1_000
BROKER_ONE_TOPICS = 30
"""Topics whose every partition broker 1 leads, with brokers 2 and 3 in the ISR."""
HOLD_BOUND_S = 0.25
"""No event may cost more of the loop thread's CPU. Unsliced, the fencing's one event computes,
applies and encodes 30,000 elections: over a second of CPU (3.3 s of wall time measured with
40,000 on the loaded reference machine). CPU time, not wall time, so that other work on a
shared machine does not fail the test; the wall time is in the message."""
SESSION_MS = 2_000
FENCING_DEADLINE_S = 60.0
"""The fencing's whole run (seconds of CPU on three processes); a hang, not a timing, fails it."""


def cluster_records() -> list[Record]:
    rng = random.Random(33)
    records: list[Record] = [
        RegisterBrokerRecord(
            broker_id,
            rng.randbytes(16),
            broker_id,
            (
                BrokerEndpoint(
                    "PLAINTEXT", "127.0.0.1", 9092 + broker_id, SecurityProtocol.PLAINTEXT
                ),
            ),
            (),
            None,
            broker_id != 1,
            False,
        )
        for broker_id in (1, 2, 3)
    ]
    for index in range(TOPICS):
        topic_id = rng.randbytes(16)
        records.append(TopicRecord(f"t-{index:04d}", topic_id))
        replicas = (1, 2, 3) if index < BROKER_ONE_TOPICS else (2, 3)
        records.extend(
            PartitionRecord(partition, topic_id, replicas, replicas, (), (), replicas[0], 0, 0, 0)
            for partition in range(PER_TOPIC)
        )
    return records


def plant(quorum: ProcessQuorum, root: Path) -> None:
    """Writes the snapshot once and copies it into every node's (formatted) directory."""
    encoded = encode_each(cluster_records())
    made = root / "snapshot"
    made.mkdir()
    writer = SnapshotWriter(made, SnapshotId(len(encoded), 0), cluster_id=quorum.cluster_id)
    writer.append(encoded)
    path = writer.freeze()
    for node_id in quorum.nodes:
        shutil.copyfile(path, quorum.cluster.data_dir(node_id) / METADATA_PARTITION_DIR / path.name)


Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(port: int) -> Samples:
    url = f"http://127.0.0.1:{port}/metrics"
    with urllib.request.urlopen(url, timeout=5) as response:
        text = response.read().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def longest_hold(samples: Samples) -> tuple[str, float, float]:
    """The event that cost the loop the most CPU, that CPU time, and the longest wall time."""
    [(event, cpu_seconds)] = [
        (dict(labels)["event"], value)
        for (name, labels), value in samples.items()
        if name == "raftmeta_controller_event_max_hold_cpu_seconds"
    ]
    [seconds] = [
        value
        for (name, _labels), value in samples.items()
        if name == "raftmeta_controller_event_max_hold_seconds"
    ]
    return event, cpu_seconds, seconds


async def write_once(servers: str, value: str) -> None:
    """One committed write that needs no broker: a topic config change."""
    change = [ConfigEntry("retention.ms", value, incremental_operation=AlterConfigOpType.SET)]
    resource = ConfigResource("topic", "t-0000", change)
    async with AsyncAdminClient({"bootstrap.servers": servers}) as admin:
        await admin.incremental_alter_configs([resource], request_timeout=60)[
            ConfigResource("topic", "t-0000")
        ]


def test_fencing_a_big_broker_and_a_failover_hold_the_queue_briefly(tmp_path: Path) -> None:
    quorum = ProcessQuorum(
        tmp_path,
        {
            "broker.session.timeout.ms": str(SESSION_MS),
            "broker.heartbeat.interval.ms": str(SESSION_MS // 4),
        },
    )
    ports = dict(zip(quorum.nodes, free_ports(len(quorum.nodes)), strict=True))
    for node_id, port in ports.items():
        quorum.cluster.node_overrides[node_id] = {"metrics.port": str(port)}
    quorum.cluster.prepare()
    plant(quorum, tmp_path)
    with running(quorum):
        quorum.start_all()
        first = quorum.wait_for_leader(deadline_s=60.0)
        active = first.leader_id

        def fenced() -> bool:
            samples = scrape(ports[active])
            return samples[("raftmeta_brokers", (("state", "fenced"),))] == 3

        wait_until(fenced, "broker 1 to be fenced", FENCING_DEADLINE_S)
        samples = scrape(ports[active])
        # No broker is left to lead them: every partition broker 1 led went leaderless.
        assert samples[("raftmeta_partitions_offline", ())] == BROKER_ONE_TOPICS * PER_TOPIC
        event, cpu_seconds, seconds = longest_hold(samples)
        assert cpu_seconds < HOLD_BOUND_S, (
            f"{event} held the queue for {cpu_seconds:.2f} s of CPU ({seconds:.2f} s)"
        )

        servers = quorum.cluster.bootstrap_servers
        asyncio.run(write_once(servers, "1000"))
        killed_at = time.monotonic()
        quorum.nodes[active].kill()
        asyncio.run(write_once(servers, "2000"))
        failover_s = time.monotonic() - killed_at
        second = quorum.wait_for_leader(newer_than=first.leader_epoch)
        assert second.leader_id != active
        event, cpu_seconds, seconds = longest_hold(scrape(ports[second.leader_id]))
        assert cpu_seconds < HOLD_BOUND_S, (
            f"{event} held the new leader's queue for {cpu_seconds:.2f} s of CPU ({seconds:.2f} s)"
        )
        assert failover_s < 30.0, f"the first write after the kill took {failover_s:.1f} s"
