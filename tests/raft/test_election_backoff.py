"""Candidates that lost a round back off by a random wait that stays random after many lost
rounds: if every draw were the maximum, voters that split a vote would retry in step, and
split it again for as long as their timers stay closer than a vote's round trip."""

from __future__ import annotations

from tests.raft.builder import CONFIG, new_core

DRAWS = 200


def test_backoff_after_many_lost_rounds_is_spread_over_its_window() -> None:
    core = new_core()
    core._election_retries = 12  # many rounds lost in a row
    draws = [core._election_backoff() for _ in range(DRAWS)]
    assert all(
        CONFIG.election_backoff_base_ms <= d <= CONFIG.election_backoff_max_ms for d in draws
    )
    at_max = sum(d == CONFIG.election_backoff_max_ms for d in draws)
    assert at_max < DRAWS // 10, f"{at_max} of {DRAWS} draws were the maximum"
    assert (
        max(draws) - min(draws)
        > (CONFIG.election_backoff_max_ms - CONFIG.election_backoff_base_ms) // 2
    )


def test_the_first_backoff_is_short() -> None:
    core = new_core()
    core._election_retries = 1
    draws = [core._election_backoff() for _ in range(DRAWS)]
    assert max(draws) <= 2 * CONFIG.election_backoff_base_ms
