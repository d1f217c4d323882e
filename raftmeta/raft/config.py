"""Timing and size settings of the consensus core, in milliseconds and bytes."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RaftConfig:
    election_timeout_ms: int = 300
    """T in the randomized election timeout [T, 2T). Kafka ships 1000."""
    fetch_timeout_ms: int = 500
    """A voter that has not fetched successfully for this long campaigns. Kafka ships 2000."""
    election_backoff_max_ms: int = 300
    election_backoff_base_ms: int = 50
    request_timeout_ms: int = 2000
    """A request unanswered for this long is sent again."""
    retry_backoff_ms: int = 20
    fetch_max_wait_ms: int = 250
    """How long a leader parks a fetch with nothing to return. Kept below the fetch timeout
    (Kafka parks 500 ms against its 2000 ms timeout), so an idle follower never times out."""
    high_watermark_delay_ms: int = 2
    """How long a leader may hold a parked fetch that only the high watermark's news would
    answer, so that the next batch rides with that news. A serial writer appends again right
    after its commit; answered at once, the follower's next fetch is still on its way back
    when that append comes, and the new batch waits a round trip for it. 0 answers at once
    (as Kafka does); the news reaches followers at most this much later."""
    fetch_max_bytes: int = 8 * 1024 * 1024
    snapshot_chunk_bytes: int = 1024 * 1024
    max_batch_bytes: int = 8 * 1024 * 1024
    commit_delivery_max_records: int = 4096
    """Most committed records one Ready hands the state machine (a batch is never split, so
    a larger batch goes alone). A node that restarts, or catches up after a long absence,
    can learn of hundreds of thousands of committed records at once; replaying them in one
    turn held its runtime for seconds (2.6 s for 373k records here), long enough for its
    followers to give up on it as leader and elect another, which then stalled the same way.
    In slices, the runtime answers fetches and votes between them."""
    repaired_voter_abstain_ms: int = 5000
    """Longest a voter whose start-up repair cut its log withholds its votes while no leader
    brings it up to date: the way out when every voter lost its tail at once."""

    max_epoch_leap: int = 1 << 16
    """Most epochs a peer's Vote, BeginQuorumEpoch or EndQuorumEpoch may move this node
    ahead in one step (answers to this node's own requests may move it any distance). Each
    election adds one epoch, so only a node that missed 65,536 elections while up would need
    an answer to catch up; a forged request near the int32 limit is refused instead of ending
    the quorum's ability to elect."""

    def __post_init__(self) -> None:
        if self.max_epoch_leap < 1:
            raise ValueError("the epoch leap must allow at least the next epoch")
        if self.election_timeout_ms <= 0 or self.fetch_timeout_ms <= 0:
            raise ValueError("election and fetch timeouts must be positive")
        if self.fetch_max_wait_ms >= self.fetch_timeout_ms:
            raise ValueError("fetch max wait must be shorter than the fetch timeout")
        if self.high_watermark_delay_ms < 0:
            raise ValueError("the high watermark delay must not be negative")
        if self.commit_delivery_max_records <= 0:
            raise ValueError("the commit delivery slice must be positive")

    @property
    def check_quorum_timeout_ms(self) -> int:
        """A leader that has not heard from a majority for this long resigns."""
        return self.fetch_timeout_ms * 3 // 2

    @property
    def fetch_resend_ms(self) -> int:
        """A fetch unanswered for this long is taken as lost and sent again."""
        return self.fetch_max_wait_ms + self.fetch_timeout_ms // 2
