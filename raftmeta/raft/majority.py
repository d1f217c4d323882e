"""Majority arithmetic over a voter set, kept apart so it can be read and tested alone.

Two leader decisions are the same question asked of different numbers: the high watermark is
the largest log end a majority of voters has reached, and the check-quorum deadline follows
the latest contact time a majority of voters has had. Both are "the value a majority is at or
above", as etcd's ``quorum.MajorityConfig.CommittedIndex`` computes it.
"""

from __future__ import annotations

from collections.abc import Iterable


def majority_size(voter_count: int) -> int:
    """How many voters make a majority: more than half of them."""
    if voter_count <= 0:
        raise ValueError("a quorum needs at least one voter")
    return voter_count // 2 + 1


def majority_value(values: Iterable[int]) -> int:
    """The largest value that a majority of ``values`` (one per voter) is at or above."""
    ordered = sorted(values, reverse=True)
    return ordered[majority_size(len(ordered)) - 1]
