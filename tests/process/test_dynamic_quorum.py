"""Dynamic controller membership (KIP-853) on real ``raftmeta serve`` processes under a writer:
replacing a controller whose disk is gone, and growing 3 -> 5 -> 3 voters (the scenarios are
in :mod:`tests.process.membership_changes`, which also prints their figures)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.process.membership_changes import grow_and_shrink, replace_dead_controller


def assert_nothing_acknowledged_lost(acked: list[str], logs: dict[int, list[str]]) -> None:
    assert len(set(acked)) == len(acked), "a value was acknowledged twice"
    first_id, first_log = next(iter(logs.items()))
    for node_id, values in logs.items():
        assert values == first_log, f"node {node_id}'s committed log differs from {first_id}'s"
        counts = Counter(values)
        missing = [v for v in acked if counts[v] == 0]
        assert not missing, f"node {node_id} lost acknowledged writes: {missing[:5]}"
        doubled = [v for v, n in counts.items() if n > 1]
        assert not doubled, f"node {node_id} holds writes twice: {doubled[:5]}"


def test_a_controller_killed_with_its_disk_lost_is_replaced_under_load(tmp_path: Path) -> None:
    outcome = replace_dead_controller(tmp_path)
    print(
        f"\nreplacement: add -> counting {outcome.add_to_counting_s * 1000:.0f} ms, "
        f"write availability {outcome.availability:.1%} "
        f"(longest gap {outcome.longest_gap_s * 1000:.0f} ms)"
    )
    # The wiped node, back under its old id, only observed until it was re-added: the voter
    # set named its old directory, whose entry made no progress.
    assert outcome.observer_before_add and outcome.old_voter_stale
    assert outcome.new_directory != outcome.old_directory
    assert len(outcome.final_voters) == 3
    assert outcome.new_directory in outcome.final_voters.values()
    assert outcome.old_directory not in outcome.final_voters.values()
    assert len(outcome.acked) >= 60
    assert_nothing_acknowledged_lost(outcome.acked, outcome.logs)


def test_the_quorum_grows_from_three_to_five_voters_and_back_under_load(tmp_path: Path) -> None:
    outcome = grow_and_shrink(tmp_path)
    assert len(outcome.grown_voters) == 5
    assert outcome.shrunk_voters == outcome.grown_voters[:3]
    assert_nothing_acknowledged_lost(outcome.acked, outcome.logs)
