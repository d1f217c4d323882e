"""How long each controller event held the queue: the measure of a stall.

The queue runs one event at a time on the node's event loop, so an event's run time is how
long every other request (a heartbeat, whose deadline is short) waited behind it. Kafka reports
the same as ``EventQueueProcessingTimeMs``. The longest so far, with its event's name, says
which operation stalls the controller; big operations are written in slices
(:mod:`raftmeta.controller.slices`) to keep it short. Committed batches applied to the image
count too, under the name ``COMMIT``, and so does a leader change (``LEADER_CHANGE``), where a
controller becoming active sets up its state: both run on the same loop between events.

Each hold is measured twice: in wall time, what the requests behind it waited, and in the
loop thread's CPU time, what the event itself cost. On a machine shared with other work the
two differ (the process waits for a core while holding the queue); the CPU time says whether
the event is too big, whatever else runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable

COMMIT = "handleCommit"
"""The name a committed batch's replay is counted under."""
LEADER_CHANGE = "handleLeaderChange"
"""The name a leader change (and becoming active with it) is counted under."""

Began = tuple[float, float]
"""Wall (``perf_counter``) and thread CPU (``thread_time``) seconds when a hold began."""


class EventHolds:
    """The longest hold so far (wall and CPU) and its event; an optional observer sees every
    hold's wall time."""

    def __init__(self) -> None:
        self.longest_s = 0.0
        self.longest_name = ""
        self.longest_cpu_s = 0.0
        self.longest_cpu_name = ""
        self.observer: Callable[[float], None] | None = None
        """Called with each hold's wall seconds (the server's processing-time histogram)."""

    @staticmethod
    def begin() -> Began:
        return time.perf_counter(), time.thread_time()

    def record(self, name: str, began: Began) -> None:
        """The hold of ``name`` that began at ``began`` ends now."""
        seconds = time.perf_counter() - began[0]
        cpu_seconds = time.thread_time() - began[1]
        if seconds > self.longest_s:
            self.longest_s = seconds
            self.longest_name = name
        if cpu_seconds > self.longest_cpu_s:
            self.longest_cpu_s = cpu_seconds
            self.longest_cpu_name = name
        if self.observer is not None:
            self.observer(seconds)

    def take_longest(self) -> tuple[str, float, str, float]:
        """The longest hold since the last call (or the start) and its event, in wall then
        CPU time; starts over."""
        longest = (self.longest_name, self.longest_s, self.longest_cpu_name, self.longest_cpu_s)
        self.longest_s = self.longest_cpu_s = 0.0
        self.longest_name = self.longest_cpu_name = ""
        return longest
