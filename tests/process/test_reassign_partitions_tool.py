"""``raftmeta reassign-partitions`` and the audit's reassignment plan against real processes:
three ``raftmeta serve`` controllers and six ``raftmeta broker`` stand-ins on three racks
(rack-1: brokers 1 and 4, rack-2: 2 and 5, rack-3: 3 and 6), whose partition leaders report
a new replica caught up after ``replica.catch.up.delay.ms``.

One cluster serves the module's scenarios in turn, each run as a user runs the tools (real
``raftmeta`` processes, output parsed from stdout):

* a skewed cluster (every replica on brokers 1-3) is audited from a stopped controller's
  metadata directory; the audit's ``reassignment-plan.json`` is executed with the tool and
  verified until done, and then every broker holds a count within the audit's bounds, with
  each partition's replication factor and rack spread kept;
* ``--generate --drain-broker`` then ``--execute`` and ``--verify`` leave a broker without a
  replica, keeping every partition's replication factor and rack spread;
* ``--generate`` onto a broker list asks the default placer; ``--list`` and ``--cancel`` (over
  the controllers' KAFKA listeners, ``--bootstrap-controller``) see and stop a move to a broker
  that is down, which cannot complete.
"""

from __future__ import annotations

import json
import signal
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from raftmeta.admin import AdminClient, NewTopic
from raftmeta.devkit.cluster import DevCluster, stop_all
from tests.process.helpers import DEADLINE_S, free_base_port, raftmeta
from tests.support.waiting import wait_until

BROKERS = 6
RACKS = 3
CATCH_UP_DELAY_MS = 500
"""A new replica counts as caught up half a second after it is added: moves take a moment,
as they would with data, and the plans still finish soon."""
OVERRIDES = {
    "broker.heartbeat.interval.ms": "250",
    "broker.session.timeout.ms": "3000",
    "replica.catch.up.delay.ms": str(CATCH_UP_DELAY_MS),
}
SKEWED_TOPICS = {"orders": 12, "payments": 9, "audit-log": 6}
"""Topic name to partition count; every replica on brokers 1-3, one per rack."""
MOVE_DEADLINE_S = 90.0


def rack(broker_id: int) -> str:
    return f"rack-{(broker_id - 1) % RACKS + 1}"


def spread(replicas: list[int]) -> int:
    return len({rack(b) for b in replicas})


def skewed_replicas(partition: int) -> list[int]:
    """Brokers 1-3 in turn as the preferred leader: three racks, all on half the cluster."""
    first = partition % 3
    return [1 + (first + step) % 3 for step in range(3)]


class Cluster:
    """The module's running cluster and the commands the scenarios run against it."""

    def __init__(self, dev: DevCluster) -> None:
        self.dev = dev
        self.client = AdminClient(
            {"bootstrap.servers": dev.bootstrap_servers, "request.timeout.ms": 10_000}
        )
        self.quorum_client = AdminClient(
            {"bootstrap.controllers": dev.kafka_bootstrap, "request.timeout.ms": 10_000}
        )
        """DescribeQuorum is served to clients bootstrapped to the controllers (KIP-919)."""

    def tool(self, *args: str, door: str = "--bootstrap-server") -> tuple[int, str, str]:
        bootstrap = (
            self.dev.kafka_bootstrap
            if door == "--bootstrap-controller"
            else (self.dev.bootstrap_servers)
        )
        result = raftmeta("reassign-partitions", door, bootstrap, *args, timeout=60)
        return result.returncode, result.stdout, result.stderr

    def fenced(self, broker_id: int) -> bool:
        view = self.client.describe_cluster().result(timeout=10)
        return any(b.id == broker_id and b.fenced for b in view.brokers)

    def assignment(self) -> dict[tuple[str, int], list[int]]:
        described = self.client.describe_topics().result(timeout=30)
        return {
            (name, partition.id): list(partition.replicas)
            for name, topic in described.items()
            for partition in topic.partitions
        }

    def execute_and_verify(self, plan: Path) -> None:
        status, out, err = self.tool("--execute", "--reassignment-json-file", str(plan))
        assert status == 0, out + err
        lines = out.splitlines()
        assert lines[0] == "Current partition replica assignment"
        rollback = json.loads(lines[2])
        assert rollback["version"] == 1 and rollback["partitions"]
        assert "Save this to use as the --reassignment-json-file option during rollback" in lines
        assert lines[-1].startswith("Successfully started partition reassignments for ")

        def verified() -> bool:
            status, out, err = self.tool("--verify", "--reassignment-json-file", str(plan))
            assert status == 0, out + err
            reported = out.splitlines()
            assert reported[0] == "Status of partition reassignment:"
            return all(line.endswith(" is completed.") for line in reported[1:])

        wait_until(verified, "every partition of the plan to be moved", MOVE_DEADLINE_S)
        status, out, _ = self.tool("--list")
        assert (status, out) == (0, "No partition reassignments found.\n")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    root = tmp_path_factory.mktemp("reassign-tool")
    dev = DevCluster(root, free_base_port(), OVERRIDES, brokers=BROKERS, racks=RACKS, kafka=True)
    dev.prepare()
    running = Cluster(dev)
    try:
        dev.start()
        dev.start_brokers()

        def all_unfenced() -> bool:
            try:
                view = running.client.describe_cluster().result(timeout=10)
            except Exception:
                return False
            return sorted(b.id for b in view.brokers if not b.fenced) == list(range(1, BROKERS + 1))

        wait_until(all_unfenced, "six registered, unfenced brokers", DEADLINE_S)
        futures = running.client.create_topics(
            [
                NewTopic(name, replica_assignment=[skewed_replicas(p) for p in range(count)])
                for name, count in SKEWED_TOPICS.items()
            ]
        )
        for future in futures.values():
            future.result(timeout=30)
        yield running
    finally:
        running.client.close()
        running.quorum_client.close()
        stop_all(list(dev.brokers.values()))
        stop_all(list(dev.nodes.values()))


def audit_a_stopped_follower(cluster: Cluster, out: Path) -> dict[str, object]:
    """Stops a controller that is not active once it holds every committed record, audits its
    metadata directory with the plain engine, starts it again; returns the report."""
    dev = cluster.dev

    def caught_up() -> bool:
        info = cluster.quorum_client.describe_quorum().result(timeout=10)
        return all(v.log_end_offset >= info.high_watermark for v in info.voters)

    wait_until(caught_up, "every controller to hold every committed record", DEADLINE_S)
    info = cluster.quorum_client.describe_quorum().result(timeout=10)
    follower = next(n for n in dev.nodes if n != info.leader_id)
    node = dev.nodes[follower]
    node.signal(signal.SIGTERM)
    assert node.wait(DEADLINE_S) is not None
    try:
        result = raftmeta(
            "audit",
            str(dev.data_dir(follower)),
            "--engine",
            "plain",
            "--format",
            "json",
            "--out",
            str(out),
            timeout=120,
        )
    finally:
        node.start()
    assert result.returncode == 0, result.stderr
    report: dict[str, object] = json.loads(result.stdout)
    return report


def test_the_audits_plan_executed_by_the_tool_leaves_every_broker_within_the_threshold(
    cluster: Cluster, tmp_path: Path
) -> None:
    before = cluster.assignment()
    held = Counter(b for replicas in before.values() for b in replicas)
    assert set(held) == {1, 2, 3}  # the skew the audit must find
    report = audit_a_stopped_follower(cluster, tmp_path / "audit")
    clusters = report["clusters"]
    assert isinstance(clusters, dict) and len(clusters) == 1
    section = next(iter(clusters.values()))["replica_balance"]
    lower, upper = section["bounds"]
    assert section["brokers_outside_threshold"] == [1, 2, 3, 4, 5, 6]
    assert section["plan"]["brokers_outside_threshold_after"] == []
    assert section["rack_shared"]["count"] == 0
    plan = tmp_path / "audit" / "reassignment-plan.json"
    document = json.loads(plan.read_text())
    assert document["version"] == 1 and len(document["partitions"]) > 0

    cluster.execute_and_verify(plan)

    after = cluster.assignment()
    counts = Counter(b for replicas in after.values() for b in replicas)
    assert all(lower <= counts[b] <= upper for b in range(1, BROKERS + 1)), (counts, lower, upper)
    predicted = {row["broker_id"]: row["replicas_after"] for row in section["broker_table"]}
    assert dict(counts) == predicted
    for key, replicas in after.items():
        assert len(replicas) == len(before[key]) == len(set(replicas))
        assert spread(replicas) >= spread(before[key])


def test_draining_a_broker_moves_every_replica_off_it_keeping_factor_and_racks(
    cluster: Cluster, tmp_path: Path
) -> None:
    before = cluster.assignment()
    drained = max(range(1, BROKERS + 1), key=lambda b: sum(b in r for r in before.values()))
    assert any(drained in replicas for replicas in before.values())
    status, out, err = cluster.tool("--generate", "--drain-broker", str(drained))
    assert status == 0, out + err
    lines = out.splitlines()
    assert lines[0] == "Current partition replica assignment"
    assert lines[3] == "Proposed partition reassignment configuration"
    current, proposed = json.loads(lines[1]), json.loads(lines[4])
    named = {(p["topic"], p["partition"]) for p in proposed["partitions"]}
    assert named == {key for key, replicas in before.items() if drained in replicas}
    assert {(p["topic"], p["partition"]) for p in current["partitions"]} == named
    plan = tmp_path / "drain.json"
    plan.write_text(lines[4])

    cluster.execute_and_verify(plan)

    after = cluster.assignment()
    assert all(drained not in replicas for replicas in after.values())
    for key, replicas in after.items():
        assert len(replicas) == len(before[key]) == len(set(replicas))
        assert spread(replicas) >= spread(before[key])


def test_generate_onto_a_broker_list_and_a_move_listed_and_cancelled_over_kafka(
    cluster: Cluster, tmp_path: Path
) -> None:
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": "audit-log"}]}))
    status, out, err = cluster.tool(
        "--generate", "--topics-to-move-json-file", str(topics), "--broker-list", "4,5,6"
    )
    assert status == 0, out + err
    proposed = json.loads(out.splitlines()[4])["partitions"]
    assert len(proposed) == SKEWED_TOPICS["audit-log"]
    assert all(sorted(p["replicas"]) == [4, 5, 6] for p in proposed)  # RF 3 on three brokers

    # A move to a broker that is down stalls until cancelled: the fenced broker can never join
    # the ISR, so --list sees the move and --cancel finds it in progress, with no race.
    before = cluster.assignment()
    replicas = before["orders", 0]
    newcomer = next(
        b for b in range(1, BROKERS + 1) if b not in replicas and rack(b) == rack(replicas[-1])
    )
    cluster.dev.brokers[newcomer].kill()
    wait_until(lambda: cluster.fenced(newcomer), f"broker {newcomer} to be fenced", DEADLINE_S)
    target = [*replicas[:-1], newcomer]
    plan = tmp_path / "move.json"
    plan.write_text(
        json.dumps(
            {"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": target}]}
        )
    )
    try:
        status, out, err = cluster.tool(
            "--execute", "--reassignment-json-file", str(plan), door="--bootstrap-controller"
        )
        assert status == 0, out + err
        status, out, err = cluster.tool("--list", door="--bootstrap-controller")
        assert status == 0, err
        assert out.splitlines() == [
            "Current partition reassignments:",
            f"orders-0: replicas: {','.join(map(str, target))},{replicas[-1]}. "
            f"adding: {newcomer}. removing: {replicas[-1]}.",
        ]
        status, out, _ = cluster.tool(
            "--verify", "--reassignment-json-file", str(plan), door="--bootstrap-controller"
        )
        assert (status, out.splitlines()[1:]) == (
            0,
            ["Reassignment of partition orders-0 is still in progress."],
        )
        status, out, err = cluster.tool(
            "--cancel", "--reassignment-json-file", str(plan), door="--bootstrap-controller"
        )
        assert (status, out) == (
            0,
            "Successfully cancelled partition reassignments for: orders-0\n",
        )
        assert cluster.assignment()["orders", 0] == replicas
        status, out, _ = cluster.tool("--cancel", "--reassignment-json-file", str(plan))
        assert (status, out) == (0, "None of the specified partition reassignments are active.\n")
        status, out, _ = cluster.tool("--verify", "--reassignment-json-file", str(plan))
        assert status == 1
        assert out.splitlines()[1] == (
            "There is no active reassignment of partition orders-0, but replica set is "
            f"[{', '.join(map(str, replicas))}] rather than [{', '.join(map(str, target))}]."
        )
    finally:
        cluster.dev.brokers[newcomer].start()
    wait_until(lambda: not cluster.fenced(newcomer), f"broker {newcomer} to be back", DEADLINE_S)
