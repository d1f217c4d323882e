"""Every leadership change is logged at INFO on every node, once, with why it happened."""

from __future__ import annotations

import itertools
import logging
import re
from pathlib import Path

import pytest

from raftmeta.quorum.settings import STREAM
from tests.quorum.harness import NodeCluster
from tests.support.scenario import run_scenario

LINE = re.compile(r"node (\d+): leader is now (nobody|node \d+) in epoch (\d+) \((.+)\)")


def leadership_lines(caplog: pytest.LogCaptureFixture) -> list[tuple[int, str, int, str]]:
    found = []
    for record in caplog.records:
        if record.name != "raftmeta.quorum.node" or record.levelno != logging.INFO:
            continue
        match = LINE.fullmatch(record.getMessage())
        if match:
            node, leader, epoch, why = match.groups()
            found.append((int(node), leader, int(epoch), why))
    return found


def test_election_and_handover_are_logged_on_every_node(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="raftmeta.quorum.node")
    epochs: dict[str, int] = {}

    async def scenario(cluster: NodeCluster) -> None:
        leader = await cluster.wait_for_leader()
        epochs["first"] = leader.node.core.epoch
        epochs["old"] = leader.node.node_id
        await cluster.append([b"before"])
        await cluster.stop(leader.node.node_id, graceful=True)
        successor = await cluster.wait_for_leader(newer_than=epochs["first"])
        epochs["second"] = successor.node.core.epoch
        epochs["new"] = successor.node.node_id
        await cluster.wait_until(
            lambda: all(
                m.node.core.leader_id == successor.node.node_id for m in cluster.members.values()
            ),
            "every survivor to follow the successor",
        )

    run_scenario(scenario, NodeCluster(tmp_path))
    lines = leadership_lines(caplog)
    first, second = epochs["first"], epochs["second"]
    old, new = epochs["old"], epochs["new"]
    for node in (1, 2, 3):
        mine = [line for line in lines if line[0] == node]
        # Once per change: no two consecutive lines say the same thing.
        assert all(a[1:3] != b[1:3] for a, b in itertools.pairwise(mine)), mine
        assert (node, f"node {old}", first, "elected") in mine or (
            node,
            f"node {old}",
            first,
            "learned of the leader of this epoch",
        ) in mine, mine
    assert any(
        line[0] == old and line[1] == "nobody" and line[3].startswith("resigned, handing over")
        for line in lines
    ), lines
    survivors = {1, 2, 3} - {old}
    for node in survivors:
        assert (node, f"node {new}", second, "handover") in lines, lines


def test_a_killed_leaders_successor_is_logged_on_every_voter_and_observer(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The crash path, on the stream transport, with an observer (as a broker runs one):
    every survivor logs the new leader once, the observer included."""
    caplog.set_level(logging.INFO, logger="raftmeta.quorum.node")
    found: dict[str, int] = {}

    async def scenario(cluster: NodeCluster) -> None:
        leader = await cluster.wait_for_leader()
        found["first"] = leader.node.core.epoch
        found["old"] = leader.node.node_id
        await cluster.append([b"before"])
        await cluster.stop(leader.node.node_id, graceful=False)
        successor = await cluster.wait_for_leader(newer_than=found["first"])
        found["second"] = successor.node.core.epoch
        found["new"] = successor.node.node_id
        await cluster.wait_until(
            lambda: all(
                m.node.core.leader_id == successor.node.node_id for m in cluster.members.values()
            ),
            "every survivor, the observer too, to follow the successor",
        )

    run_scenario(scenario, NodeCluster(tmp_path, observers=1, transport=STREAM))
    lines = leadership_lines(caplog)
    survivors = {1, 2, 3, 4} - {found["old"]}
    for node in survivors:
        mine = [line for line in lines if line[0] == node]
        assert all(a[1:3] != b[1:3] for a, b in itertools.pairwise(mine)), mine
        told = [line for line in mine if line[1:3] == (f"node {found['new']}", found["second"])]
        assert len(told) == 1, mine
    assert (found["new"], f"node {found['new']}", found["second"], "elected") in lines, lines
