"""A server process's collector settings (raftmeta.quorum.collector)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from raftmeta.quorum import collector


@pytest.fixture
def restored_collector() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.set_threshold(*thresholds)
    gc.unfreeze()


@pytest.mark.usefixtures("restored_collector")
def test_a_server_collects_the_oldest_generation_rarely() -> None:
    gc.set_threshold(700, 10, 10)
    collector.tune_for_server()
    young, middle, oldest = gc.get_threshold()
    assert (young, middle, oldest) == collector.SERVER_THRESHOLDS
    # A full collection only after a million young allocations or more, not 70,000.
    assert young * middle * oldest >= 1_000_000


@pytest.mark.usefixtures("restored_collector")
def test_freezing_keeps_the_loaded_state_out_of_later_collections() -> None:
    gc.unfreeze()
    loaded = [{"partition": index} for index in range(1000)]
    collector.freeze_loaded_state()
    assert gc.get_freeze_count() >= len(loaded)
    tracked = {id(item) for item in gc.get_objects()}
    assert not any(id(item) in tracked for item in loaded)
