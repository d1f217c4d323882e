"""A node builds the state of a snapshot it loads on a worker thread, and its event loop goes
on turning meanwhile: only the swap runs on the loop.

Decoding and building a large snapshot's state on the loop (0.7 s + 0.7 s for 375k records)
held every fetch and vote answer for as long; a follower installing its leader's snapshot, or a
restarted node loading its own, went silent for seconds."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from raftmeta.quorum.client import PreparingListener
from raftmeta.quorum.node import SnapshotInstall, build_snapshot_state
from raftmeta.storage import SnapshotReader
from tests.quorum import harness
from tests.quorum.harness import NodeCluster
from tests.support.loop_turns import Turns
from tests.support.scenario import run_scenario

BATCHES_WHILE_AWAY = 40
RECORDS_PER_BATCH = 2000
MIN_TURNS_DURING_LOAD = 3
"""Held on the loop, a load sees no turn at all; off it, the loop takes the interpreter back
every switch interval (5 ms) of a build that takes far longer than a few of them."""


@dataclass(eq=False)
class LoadLog:
    """Per snapshot the watched node loaded: its record count and the turn counts when the
    preparation began and when the install ran."""

    node_id: int | None = None
    loads: list[tuple[int, int, int]] = field(default_factory=list)


def test_a_follower_installs_a_large_snapshot_while_its_loop_keeps_turning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = Turns()
    watched = LoadLog()

    class PreparingRecorder(harness.Recorder):
        """Builds an index of the snapshot's records (the state machine's work) in the
        preparation; the install only swaps it in."""

        index: dict[bytes, int]

        def handle_load_snapshot(self, reader: SnapshotReader) -> None:
            self.prepare_snapshot(reader)()

        def prepare_snapshot(self, reader: SnapshotReader) -> SnapshotInstall:
            began = turns.count
            values = list(reader.records())
            index: dict[bytes, int] = {}
            for value in values:
                batch, _, record = value.decode().removeprefix("r-").partition("-")
                index[value] = int(batch) * RECORDS_PER_BATCH + int(record)

            def install() -> None:
                if self.node_id == watched.node_id:
                    watched.loads.append((len(values), began, turns.count))
                self.index = index
                super(PreparingRecorder, self).handle_load_snapshot(reader)

            return install

    monkeypatch.setattr(harness, "Recorder", PreparingRecorder)
    assert isinstance(PreparingRecorder(0, harness.Changes()), PreparingListener)

    async def scenario(cluster: NodeCluster) -> None:
        counter = asyncio.create_task(turns.run())
        try:
            leader = await cluster.wait_for_leader()
            away = next(i for i in cluster.members if i != leader.node.node_id)
            await cluster.stop(away)
            for i in range(BATCHES_WHILE_AWAY):
                await cluster.append([f"r-{i}-{j}".encode() for j in range(RECORDS_PER_BATCH)])
            half = BATCHES_WHILE_AWAY * RECORDS_PER_BATCH // 2
            await cluster.wait_until(
                lambda: leader.node.core.log.start_offset >= half,
                f"the leader to snapshot and trim its log past offset {half}",
            )
            watched.node_id = away
            returning = await cluster.restart(away)
            await cluster.wait_until(
                lambda: returning.recorder.snapshots_loaded > 0,
                "the returning node to install the leader's snapshot",
            )
            await cluster.wait_for_commit(leader.recorder.committed_offset, [returning])
            assert returning.recorder.values == leader.recorder.values
        finally:
            counter.cancel()

        assert watched.loads, "the returning node loaded no snapshot"
        for records, began, installed in watched.loads:
            assert records >= BATCHES_WHILE_AWAY * RECORDS_PER_BATCH // 2
            assert installed - began >= MIN_TURNS_DURING_LOAD, (
                f"the loop turned {installed - began} times while {records} records loaded"
            )

    run_scenario(scenario, NodeCluster(tmp_path, max_bytes_between_snapshots=200_000))


@dataclass(eq=False)
class Built:
    """One object of a built state (tracked by the cyclic collector, as images' objects are)."""

    position: int


@pytest.fixture
def collector_held() -> Iterator[None]:
    """No collection runs during the test, so objects stay in the generation they were put
    in; the collector's state is restored after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def build(count: int, into: list[Built]) -> SnapshotInstall:
    into.extend(Built(position) for position in range(count))
    return lambda: None


@pytest.mark.usefixtures("collector_held")
def test_a_built_state_leaves_the_young_generation_so_no_young_collection_walks_it() -> None:
    """Left in generation 0, the next young collection (on whichever thread allocates next,
    the event loop's included) would walk every object of the new state at once."""
    gc.unfreeze()
    built: list[Built] = []
    build_snapshot_state(lambda: build(20_000, built))
    young = {id(obj) for generation in (0, 1) for obj in gc.get_objects(generation=generation)}
    oldest = {id(obj) for obj in gc.get_objects(generation=2)}
    assert not any(id(obj) in young for obj in built)
    assert all(id(obj) in oldest for obj in built)
    assert gc.get_freeze_count() == 0
    assert not gc.isenabled(), "the collector's switch was not left as it was found"


@pytest.mark.usefixtures("collector_held")
def test_a_process_that_keeps_its_loaded_state_frozen_gets_the_new_state_frozen_too() -> None:
    gc.freeze()
    try:
        frozen_before = gc.get_freeze_count()
        built: list[Built] = []
        build_snapshot_state(lambda: build(20_000, built))
        assert gc.get_freeze_count() >= frozen_before + len(built)
    finally:
        gc.unfreeze()
