"""Dynamic controller membership (KIP-853) on real ``raftmeta serve`` processes under a writer:
replacing a controller whose disk is gone, and growing 3 -> 5 -> 3 voters (the scenarios are
in :mod:`tests.process.membership_changes`, which also prints their figures)."""

from __future__ import annotations

from pathlib import Path

from tests.process.helpers import assert_nothing_acknowledged_lost
from tests.process.membership_changes import grow_and_shrink, replace_dead_controller


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
