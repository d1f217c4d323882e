"""Where one serial commit's time goes: every stage's timestamp from all three processes.

``quorum_bench.py --breakdown`` starts three raftmeta voters with ``--trace`` (see
``quorum_nodes/stage_trace.py``), makes serial appends on the leader with tracing on, collects
every process's events and lays them on one time line (``CLOCK_MONOTONIC`` is shared by the
processes of a machine). For each commit, the window runs from its ``append`` to its ``commit``
on the leader; in each process the first event of each stage within the window is taken, as ms
after the append. The table prints the median (and p90) of each stage over all commits, in
the order they happen, for the leader and the follower whose acknowledgement came first, then
the slowest 1 % of commits with the step that took longest in each (what makes the p99).
"""

from __future__ import annotations

import bisect
import itertools
import statistics
from collections import defaultdict
from collections.abc import Iterator, Sequence

Event = tuple[int, str, str]
"""(monotonic ns, stage, detail), as the node's ``trace`` command returns them."""


def _windows(leader: Sequence[Event]) -> list[tuple[int, int]]:
    """(append ns, commit ns) of each serial append, from the leader's events."""
    windows = []
    started: int | None = None
    for at, stage, _ in leader:
        if stage == "append":
            started = at
        elif stage == "commit" and started is not None:
            windows.append((started, at))
            started = None
    return windows


CHAIN: tuple[tuple[str, str, str], ...] = (
    ("leader", "propose", "append"),
    ("leader", "driver_send FetchResponse", "propose"),
    ("leader", "frame_out FETCH ANSWER", "driver_send FetchResponse"),
    ("leader", "persist_start", "propose"),
    ("leader", "persist_end", "persist_start"),
    ("follower", "frame_in FETCH ANSWER", "frame_out FETCH ANSWER"),
    ("follower", "step FetchResponse", "frame_in FETCH ANSWER"),
    ("follower", "persist_start", "step FetchResponse"),
    ("follower", "persist_end", "persist_start"),
    ("follower", "driver_send FetchRequest", "persist_end"),
    ("follower", "frame_out FETCH REQUEST", "driver_send FetchRequest"),
    ("leader", "frame_in FETCH REQUEST", "frame_out FETCH REQUEST"),
    ("leader", "step FetchRequest", "frame_in FETCH REQUEST"),
)
"""The commit's causal chain: (process, stage, the stage it follows). Each stage is the first
such event in its process at or after the one it follows (in whichever process that was)."""


def _first_after(
    events: Sequence[Event], times: Sequence[int], key: str, begin: int, end: int
) -> int | None:
    """The time of the first ``stage detail`` equal to ``key`` within [begin, end]."""
    index = bisect.bisect_left(times, begin)
    while index < len(events) and events[index][0] <= end:
        at, stage, detail = events[index]
        if f"{stage} {detail}".strip() == key:
            return at
        index += 1
    return None


def _chain(
    leader: int,
    follower: int,
    events: dict[int, list[Event]],
    times: dict[int, list[int]],
    begin: int,
    end: int,
) -> dict[str, int]:
    """Each stage of :data:`CHAIN` found in one commit's window, by ``process stage``."""
    found = {"leader append": begin}
    last_of: dict[str, int] = {"append": begin}
    for role, key, after in CHAIN:
        if after not in last_of:
            break
        node = leader if role == "leader" else follower
        at = _first_after(events[node], times[node], key, last_of[after], end)
        if at is None:
            continue
        found[f"{role} {key}"] = at
        last_of[key] = at
    found["leader commit"] = end
    return found


def _gc_intervals(events: dict[int, list[Event]]) -> list[tuple[int, int]]:
    """(start, stop) of every garbage collection in any process, by start."""
    intervals = []
    for found in events.values():
        started: int | None = None
        for at, stage, _ in found:
            if stage == "gc_start":
                started = at
            elif stage == "gc_stop" and started is not None:
                intervals.append((started, at))
                started = None
    return sorted(intervals)


def _gc_ms(intervals: Sequence[tuple[int, int]], begin: int, end: int) -> float:
    """Milliseconds of garbage collection (any process) within [begin, end]."""
    total = 0
    for started, stopped in intervals[: bisect.bisect_right(intervals, (end, end))]:
        total += max(0, min(stopped, end) - max(started, begin))
    return total / 1e6


def breakdown(leader_id: int, events: dict[int, list[Event]]) -> Iterator[str]:
    """The table's lines: per process and stage, median and p90 ms after the append."""
    sorted_events = {node: sorted(found) for node, found in events.items()}
    windows = _windows(sorted_events[leader_id])
    if not windows:
        yield "no traced commits"
        return
    times = {node: [at for at, _, _ in found] for node, found in sorted_events.items()}
    followers = [node for node in sorted_events if node != leader_id]
    offsets: dict[str, list[float]] = defaultdict(list)
    collections = _gc_intervals(sorted_events)
    slowest: list[tuple[float, str, float, float]] = []
    for begin, end in windows:
        chains = [_chain(leader_id, node, sorted_events, times, begin, end) for node in followers]
        # The follower whose acknowledgement reached the leader first committed the record.
        chosen = min(chains, key=lambda chain: chain.get("leader step FetchRequest", end + 1))
        for name, at in chosen.items():
            offsets[name].append((at - begin) / 1e6)
        steps = sorted(chosen.items(), key=lambda item: item[1])
        gap, step = max(
            (
                (later[1] - earlier[1], f"{earlier[0]} -> {later[0]}")
                for earlier, later in itertools.pairwise(steps)
            ),
            default=(0, "-"),
        )
        slowest.append(((end - begin) / 1e6, step, gap / 1e6, _gc_ms(collections, begin, end)))
    total = sorted((end - begin) / 1e6 for begin, end in windows)
    medians = {name: statistics.median(values) for name, values in offsets.items()}
    yield f"{len(windows)} traced serial commits; ms after append (median, p90, share of commits)"
    for name in sorted(medians, key=medians.__getitem__):
        values = sorted(offsets[name])
        p90 = values[min(len(values) - 1, int(0.9 * len(values)))]
        share = len(values) / len(windows)
        yield f"  {name:<36} {medians[name]:7.3f} {p90:7.3f}   {share:4.0%}"
    slowest.sort(reverse=True)
    tail = slowest[: max(1, len(slowest) // 100)]
    yield f"the slowest {len(tail)} commits (1 %), each with its longest step:"
    for total_ms, step, gap_ms, gc_ms in tail:
        collecting = f"; garbage collection {gc_ms:.3f} ms" if gc_ms else ""
        yield f"  {total_ms:7.3f} ms, of which {gap_ms:7.3f} ms in {step}{collecting}"
    collected = [gc_ms for _, _, _, gc_ms in slowest if gc_ms]
    yield (
        f"garbage collection ran during {len(collected)} of {len(slowest)} commits"
        + (f", at most {max(collected):.3f} ms" if collected else "")
    )
    yield (
        f"  commit (append -> future resolved): median {statistics.median(total):.3f}, "
        f"p90 {total[int(0.9 * len(total))]:.3f}, max {total[-1]:.3f}"
    )
