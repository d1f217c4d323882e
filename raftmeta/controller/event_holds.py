"""How long each controller event held the queue: the measure of a stall.

The queue runs one event at a time on the node's event loop, so an event's run time is how
long every other request (a heartbeat, whose deadline is short) waited behind it. Kafka reports
the same as ``EventQueueProcessingTimeMs``. The longest so far, with its event's name, says
which operation stalls the controller; big operations are written in slices
(:mod:`raftmeta.controller.slices`) to keep it short. Committed batches applied to the image
count too, under the name ``COMMIT``, and so does a leader change (``LEADER_CHANGE``), where a
controller becoming active sets up its state: both run on the same loop between events.
"""

from __future__ import annotations

from collections.abc import Callable

COMMIT = "handleCommit"
"""The name a committed batch's replay is counted under."""
LEADER_CHANGE = "handleLeaderChange"
"""The name a leader change (and becoming active with it) is counted under."""


class EventHolds:
    """The longest hold so far and its event; an optional observer sees every hold."""

    def __init__(self) -> None:
        self.longest_s = 0.0
        self.longest_name = ""
        self.observer: Callable[[float], None] | None = None
        """Called with each hold's seconds (the server's processing-time histogram)."""

    def record(self, name: str, seconds: float) -> None:
        if seconds > self.longest_s:
            self.longest_s = seconds
            self.longest_name = name
        if self.observer is not None:
            self.observer(seconds)

    def take_longest(self) -> tuple[str, float]:
        """The longest hold since the last call (or the start) and its event; starts over."""
        longest = (self.longest_name, self.longest_s)
        self.longest_s = 0.0
        self.longest_name = ""
        return longest
