"""How long a follower's fetches take to come back, and a warning when that nears the timeout.

A follower counts a fetch as lost, and sends it again, when no answer came within the leader's
long-poll wait plus half of ``controller.quorum.fetch.timeout.ms`` (``fetch_resend_ms``); it
starts an election when no fetch succeeded for the whole timeout, and a leader that no majority
fetched from for 1.5 times that resigns. So once the round trip passes half the fetch timeout
(250 ms at the default 500 ms) every fetch is lost, healthy leaders are voted out again and
again, and writes stop for as long as the latency lasts (400 ms each way did exactly that),
with nothing in the logs to say why. The node therefore times every Fetch round trip it makes
as a follower, and says so once, as a WARNING, when the smoothed round trip passes
:data:`WARN_FRACTION` of the fetch timeout (60 % of the way to that cliff), and once more
(INFO) when it is back under :data:`CLEAR_FRACTION`; a gauge shows the value.

A fetch the leader had nothing for is parked there for up to the request's ``max_wait_ms``
before it is answered, so for an empty answer that wait is taken off the time measured (an
early answer, for a high-watermark change, then counts a little short, never long).
"""

from __future__ import annotations

import logging

from raftmeta.raft.messages import FetchRequest, FetchResponse

log = logging.getLogger(__name__)

WARN_FRACTION = 0.3
"""Warn when the smoothed round trip passes this fraction of the fetch timeout."""

CLEAR_FRACTION = 0.2
"""The episode ends when it falls back under this fraction (apart from the warning level, so
a round trip hovering at the threshold does not warn on every fetch)."""

SMOOTHING = 0.25
"""Weight of the newest sample in the moving average: a few slow fetches in a row move it,
one stalled by a pause of the machine does not."""


class FetchRoundTrips:
    """The smoothed round trip of this node's fetches to its leader."""

    def __init__(self, node_id: int, fetch_timeout_ms: int) -> None:
        self.node_id = node_id
        self.fetch_timeout_ms = fetch_timeout_ms
        self.smoothed_ms: float | None = None
        """None until the first fetch came back."""
        self.slow = False
        """Whether a slow-link episode is under way (warned, not yet cleared)."""

    def observe(self, elapsed_ms: int, request: FetchRequest, response: FetchResponse) -> None:
        """Count one answered fetch that took ``elapsed_ms`` from sending to answer."""
        round_trip = elapsed_ms
        if not response.batches and request.max_wait_ms > 0:
            round_trip = max(0, elapsed_ms - request.max_wait_ms)
        previous = self.smoothed_ms
        smoothed = (
            float(round_trip)
            if previous is None
            else previous + SMOOTHING * (round_trip - previous)
        )
        self.smoothed_ms = smoothed
        if not self.slow and smoothed > WARN_FRACTION * self.fetch_timeout_ms:
            self.slow = True
            log.warning(
                "node %d: fetches to the leader take %.0f ms to come back, close to what "
                "controller.quorum.fetch.timeout.ms (%d ms) allows: past half of it every "
                "fetch is lost and the leader voted out. On a slow or distant link raise "
                "controller.quorum.fetch.timeout.ms to at least 4 times the round trip, and "
                "controller.quorum.election.timeout.ms with it",
                self.node_id,
                smoothed,
                self.fetch_timeout_ms,
            )
        elif self.slow and smoothed < CLEAR_FRACTION * self.fetch_timeout_ms:
            self.slow = False
            log.info(
                "node %d: fetch round trip back to %.0f ms (fetch timeout %d ms)",
                self.node_id,
                smoothed,
                self.fetch_timeout_ms,
            )
