"""Combined nodes (``process.roles=broker,controller``) as real processes: three ``raftmeta
serve`` processes, each a voter and a broker under one node id, with no broker process beside
them.

The quorum elects a leader, the three brokers register and are unfenced under the nodes' ids,
and no node shows up as an observer (a combined node's broker reads its controller's replica
instead of fetching the log under the voter's id). ``kill -9`` of the active controller elects
a new leader and fences the killed node's broker; restarting the node unfences it; the
partitions its broker led went elsewhere, and ``raftmeta leader-election`` brings them back.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from raftmeta.admin.quorum import QuorumInfo
from raftmeta.devkit.cluster import DevCluster, stop_all
from raftmeta.devkit.demo.view import BrokerState, ClusterView, Partitions
from raftmeta.devkit.ports import free_port_run
from tests.process.helpers import DEADLINE_S, ProcessQuorum, raftmeta
from tests.process.test_dev import DEV_COMMAND, run_dev_until_leader, stop_with_ctrl_c
from tests.support.waiting import wait_until

NODE_IDS = {3000, 3001, 3002}
TOPIC = "combined"
PARTITIONS = 6
SESSION_OVERRIDES = {
    # A killed node's broker is fenced 3 s after its last heartbeat (Kafka: 9 s).
    "broker.heartbeat.interval.ms": "500",
    "broker.session.timeout.ms": "3000",
    # The test moves leadership back itself, with leader-election; a rebalance would race it.
    "auto.leader.rebalance.enable": "false",
}


class CombinedQuorum(ProcessQuorum):
    """Three combined nodes from their properties files, each run by ``raftmeta serve``."""

    def __init__(self, root: Path) -> None:
        self.cluster = DevCluster(root, free_port_run(3), SESSION_OVERRIDES, combined=True)
        self.cluster.prepare()
        self.client_tls = None


@pytest.fixture
def quorum(tmp_path: Path) -> Iterator[CombinedQuorum]:
    combined = CombinedQuorum(tmp_path / "combined")
    try:
        yield combined
    finally:
        stop_all(list(combined.nodes.values()))


def brokers(view: ClusterView) -> dict[int, BrokerState]:
    try:
        return view.brokers()
    except Exception:  # no controller answers for a moment (an election)
        return {}


def fenced(view: ClusterView) -> set[int] | None:
    """The fenced brokers, once all three nodes' brokers are registered; None before."""
    known = brokers(view)
    if set(known) != NODE_IDS:
        return None
    return {b for b, state in known.items() if state.fenced}


def wait_for_fenced(view: ClusterView, expected: set[int], what: str) -> None:
    wait_until(lambda: fenced(view) == expected, what, DEADLINE_S)


def partitions(view: ClusterView) -> Partitions | None:
    try:
        return view.partitions([TOPIC])
    except Exception:
        return None


def partitions_when(
    view: ClusterView, condition: Callable[[Partitions], bool]
) -> Callable[[], Partitions | None]:
    """A probe for ``wait_until``: the topic's partitions once ``condition`` holds for them."""

    def probe() -> Partitions | None:
        found = partitions(view)
        return found if found is not None and condition(found) else None

    return probe


def no_observer_is_a_voter(info: QuorumInfo) -> None:
    voters = {v.node_id for v in info.voters}
    assert voters == NODE_IDS
    assert not voters & {o.node_id for o in info.observers}, info.observers


def test_three_combined_nodes_fail_over_fence_unfence_and_elect_preferred_leaders(
    quorum: CombinedQuorum,
) -> None:
    for node_id, node in quorum.nodes.items():
        text = node.config.read_text()
        assert "process.roles=broker,controller" in text, text
        assert f"node.id={node_id}" in text
    assert not quorum.cluster.brokers  # no broker process: the nodes are the brokers
    quorum.start_all()
    first = quorum.wait_for_leader()
    servers = quorum.cluster.bootstrap_servers
    view = ClusterView(servers)
    try:
        wait_for_fenced(view, set(), "three unfenced brokers under the nodes' ids")
        no_observer_is_a_voter(first)
        view.create_topics([TOPIC], PARTITIONS, 3)
        balanced = wait_until(
            partitions_when(
                view, lambda p: len(p.partitions) == PARTITIONS and not p.not_preferred()
            ),
            "every partition led by its preferred replica",
            DEADLINE_S,
        )
        victim = first.leader_id
        assert balanced.led_by(victim), "the victim's broker leads some partitions"

        quorum.nodes[victim].kill()
        second = quorum.wait_for_leader(newer_than=first.leader_epoch)
        assert second.leader_id != victim
        wait_for_fenced(view, {victim}, f"node {victim}'s broker fenced after kill -9")
        moved = wait_until(
            partitions_when(view, lambda p: not p.led_by(victim)),
            f"every partition led by a broker other than {victim}",
            DEADLINE_S,
        )
        skewed = moved.not_preferred()
        assert skewed and all(p.preferred == victim for p in skewed)

        quorum.start(victim)
        wait_for_fenced(view, set(), f"node {victim}'s broker unfenced after its restart")
        still = partitions(view)
        assert still is not None and still.not_preferred(), "no rebalance ran on its own"

        elected = raftmeta(
            "leader-election",
            "--bootstrap-server",
            servers,
            "--election-type",
            "PREFERRED",
            "--all-topic-partitions",
            timeout=60,
        )
        assert elected.returncode == 0, elected.stderr
        back = wait_until(
            partitions_when(view, lambda p: not p.not_preferred()),
            "every partition back on its preferred leader",
            DEADLINE_S,
        )
        assert len(back.led_by(victim)) == len(balanced.led_by(victim))
        no_observer_is_a_voter(quorum.wait_for_leader())
    finally:
        view.close()
    quorum.check_alive()


def test_a_separate_broker_with_a_controllers_id_is_still_refused(
    quorum: CombinedQuorum,
) -> None:
    """Only a combined node's broker may use a voter's id: ``raftmeta broker`` under 3000
    refuses to start, in one line, before it fetches anything."""
    quorum.start_all()
    quorum.wait_for_leader()
    refused = raftmeta(
        "broker",
        "--bootstrap-server",
        quorum.cluster.bootstrap_servers,
        "--broker-id",
        "3000",
        "--data-dir",
        str(quorum.cluster.root / "intruder"),
        timeout=60,
    )
    assert refused.returncode == 2, refused.stderr
    assert "must not use a controller's id" in refused.stderr
    assert refused.stderr.count("\n") == 1


@pytest.mark.parametrize("tls", [False, True], ids=["plaintext", "mutual-tls"])
def test_dev_combined_runs_three_combined_nodes_and_no_broker_process(
    tmp_path: Path, tls: bool
) -> None:
    """Over mutual TLS the broker half speaks with its node's ``controller-<id>`` certificate,
    which the controllers accept for that one broker id."""
    data_dir = tmp_path / "dev"
    extra = ("--combined", "--tls") if tls else ("--combined",)
    dev, output = run_dev_until_leader(data_dir, free_port_run(3), *extra)
    try:
        assert "Brokers: 3 registered and unfenced (combined with the controllers)" in output
        assert not re.search(r"^broker \d+: pid", output, re.MULTILINE), output
        for node_id in NODE_IDS:
            properties = (data_dir / f"node-{node_id}.properties").read_text()
            assert "process.roles=broker,controller" in properties
            assert (data_dir / f"node-{node_id}" / "broker" / "broker.status").is_file()
    except BaseException:
        dev.kill()
        raise
    stop_with_ctrl_c(dev, output)


def test_dev_combined_refuses_separate_brokers(tmp_path: Path) -> None:
    result = subprocess.run(
        [*DEV_COMMAND, "--data-dir", str(tmp_path / "dev"), "--combined", "--brokers", "2"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "raftmeta dev: --combined runs no separate brokers: leave out --brokers"
    )
