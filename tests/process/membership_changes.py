"""Dynamic controller membership (KIP-853) on real processes, under a steady writer.

Three ``raftmeta serve`` controllers of a dynamic quorum (``raftmeta dev --dynamic``'s layout),
each running the load generator (the leader writes, and notes every acknowledged value in its
acked log). Two scenarios, each checked afterwards against every node's log:

* **replace**: a follower is killed with kill -9 and its disk is lost; a new one is formatted
  under the same node id (a new directory id) with ``--no-initial-controllers`` and started.
  Until it is re-added it may only observe: the voter set still names the old directory. Then
  ``quorum remove-controller`` (the old directory) and ``quorum add-controller`` (the new one)
  bring the quorum back to three healthy voters.
* **grow and shrink**: two controllers join (3 -> 5 voters) with ``add-controller`` and leave
  again with ``remove-controller`` (5 -> 3).

Run as a script it prints the figures of the replacement, medians over runs:

    python -m tests.process.membership_changes [--runs 3]

* leader: from the leader appending the new VotersRecord to its commit (the leader's log
  line), the quorum's own part of an add;
* add -> counting: from the start of ``add-controller`` until the leader lists the new voter
  with its log end at or past the high watermark of that moment (it then counts toward the
  high watermark);
* add-controller: the command's own time (it returns once the VotersRecord committed), and
  the same command's time with --dry-run (a Python process starting and reading its files,
  no call), to tell the tool's start-up from the quorum's work;
* write availability from the kill to three healthy voters: the share of 100 ms windows in
  which some write was acknowledged, and the longest time without one.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.machine import describe_machine, load_average
from raftmeta.admin.quorum import DescribeError, QuorumInfo, describe_quorum
from raftmeta.config.properties import format_properties
from raftmeta.devkit.cluster import DevCluster, NodeProcess, node_properties, stop_all
from raftmeta.devkit.ports import free_port_run
from raftmeta.server.serve import LOAD_RESOURCE
from raftmeta.storage.meta_properties import read_meta_properties
from tests.support.waiting import wait_until

DEADLINE_S = 30.0
LOAD_RATE = 200.0
WINDOW_S = 0.1
SAMPLE_EVERY_S = 0.01
SPARE_CONTROLLERS = 2
"""Ports kept free after the first three for the controllers that join while growing."""


def raftmeta(*args: str, timeout: float = 90.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "raftmeta", *args], capture_output=True, text=True, timeout=timeout
    )


class DynamicQuorum:
    """A dynamic quorum's processes: the three first voters and any that join later."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.base_port = free_port_run(3 + SPARE_CONTROLLERS)
        self.cluster = DevCluster(root, self.base_port, dynamic=True)
        self.cluster.prepare()
        self.first_ports = dict(self.cluster.ports)
        self.incarnation: dict[int, int] = {}

    @property
    def nodes(self) -> dict[int, NodeProcess]:
        return self.cluster.nodes

    @property
    def cluster_id(self) -> str:
        return self.cluster.cluster_id

    @property
    def bootstrap(self) -> str:
        return self.cluster.bootstrap_servers

    def acked_log(self, node_id: int) -> Path:
        return self.root / f"acked-{node_id}-{self.incarnation.get(node_id, 0)}.log"

    def start(self, node_id: int) -> None:
        self.nodes[node_id].start(
            ["--load-generator", str(LOAD_RATE), "--acked-log", str(self.acked_log(node_id))]
        )

    def start_all(self) -> None:
        for node_id in self.nodes:
            self.start(node_id)

    def acked(self) -> list[str]:
        values: list[str] = []
        for path in sorted(self.root.glob("acked-*.log")):
            values += path.read_text().splitlines()
        return values

    def acked_count(self) -> int:
        return sum(path.read_bytes().count(b"\n") for path in self.root.glob("acked-*.log"))

    def describe(self) -> QuorumInfo | None:
        for node in self.nodes.values():
            status = node.exit_status
            if status is not None and status not in (0, -signal.SIGKILL):
                raise AssertionError(f"node {node.node_id} exited with {status}: {node.log_tail()}")
        try:
            return describe_quorum(self.bootstrap, self.cluster_id, timeout_s=1.0)
        except DescribeError:
            return None

    def wait_for(self, check: Callable[[QuorumInfo], bool], what: str) -> QuorumInfo:
        def found() -> QuorumInfo | None:
            info = self.describe()
            return info if info is not None and check(info) else None

        return wait_until(found, what, DEADLINE_S)

    def directory_id(self, node_id: int) -> str:
        meta = read_meta_properties(self.cluster.data_dir(node_id) / "meta.properties")
        assert meta.directory_id is not None
        return meta.directory_id

    def format_joining(self, node_id: int) -> None:
        """Format ``node_id``'s (empty) directory to join later, as an observer first."""
        result = raftmeta(
            "format",
            "--config",
            str(self.nodes[node_id].config),
            "--cluster-id",
            self.cluster_id,
            "--no-initial-controllers",
        )
        assert result.returncode == 0, result.stderr

    def new_controller(self, node_id: int) -> None:
        """A controller that is not yet in the quorum: its config names the first voters as
        bootstrap servers; it is formatted with --no-initial-controllers."""
        port = self.base_port + (node_id - min(self.first_ports))
        data_dir = self.cluster.data_dir(node_id)
        properties = node_properties(
            node_id, self.first_ports, data_dir, self.cluster_id, dynamic=True, own_port=port
        )
        config = self.root / f"node-{node_id}.properties"
        config.write_text(format_properties(properties))
        self.cluster.nodes[node_id] = NodeProcess(
            node_id, config, self.root / f"node-{node_id}.log"
        )
        self.cluster.ports[node_id] = port
        self.format_joining(node_id)

    def wipe(self, node_id: int) -> None:
        """The disk is gone: an empty directory, formatted again (a new directory id)."""
        shutil.rmtree(self.cluster.data_dir(node_id))
        self.incarnation[node_id] = self.incarnation.get(node_id, 0) + 1
        self.format_joining(node_id)

    def add_controller(self, node_id: int, *flags: str) -> subprocess.CompletedProcess[str]:
        return raftmeta(
            "quorum", "add-controller", "--config", str(self.nodes[node_id].config), *flags
        )

    def remove_controller(
        self, node_id: int, directory_id: str
    ) -> subprocess.CompletedProcess[str]:
        return raftmeta(
            "quorum",
            "remove-controller",
            "--bootstrap-server",
            self.bootstrap,
            "--controller-id",
            str(node_id),
            "--controller-directory-id",
            directory_id,
        )

    def healthy(self, voters: dict[int, str]) -> QuorumInfo:
        """Wait until the voters are exactly ``voters`` (id -> directory id), all holding the
        leader's log end."""

        def check(info: QuorumInfo) -> bool:
            leader = info.leader
            return (
                leader is not None
                and {v.node_id: v.directory_id for v in info.voters} == voters
                and all(v.log_end_offset == leader.log_end_offset for v in info.voters)
            )

        return self.wait_for(check, f"voters {sorted(voters)} healthy")

    def settle_and_read_logs(self) -> dict[int, list[str]]:
        """End the load, let every running node hold the whole committed log, stop them all
        gracefully and read each one's load records from its files."""
        running = [n for n in self.nodes.values() if n.running]
        for node in running:
            node.signal(signal.SIGUSR1)
        # Each node handles the signal when its loop gets to it; until it has, its generator
        # may still be writing, and a log end the voters share says nothing yet.
        for node in running:
            wait_until(
                functools.partial(_load_stopped, node),
                f"node {node.node_id}'s load to stop",
                DEADLINE_S,
            )
        seen: list[int] = []

        def settled() -> bool:
            info = self.describe()
            if info is None or info.leader is None:
                seen.clear()
                return False
            end = info.leader.log_end_offset
            if info.high_watermark != end or any(v.log_end_offset != end for v in info.voters):
                seen.clear()
                return False
            # A write staged just before the load stopped is appended when the controller's
            # linger (a few ms) ends: the same shared end on two probes a pause apart.
            again = seen == [end]
            seen[:] = [end]
            return again

        wait_until(settled, "the voters to hold the whole, committed log", DEADLINE_S)
        stop_all(list(self.nodes.values()))
        return {node.node_id: self.logged_values(node.node_id) for node in running}

    def logged_values(self, node_id: int) -> list[str]:
        result = raftmeta("log", "dump", "--json", str(self.cluster.data_dir(node_id)))
        assert result.returncode == 0, result.stderr
        values: list[str] = []
        for line in result.stdout.splitlines():
            entry = json.loads(line)
            for record in entry.get("records", ()):
                if record.get("resource_name") == LOAD_RESOURCE:
                    values.append(record["value"])
        return values

    def stop_all(self) -> None:
        stop_all(list(self.nodes.values()))

    def leader_commit_ms(self, directory_id: str) -> int:
        """How long after appending it the leader saw the VotersRecord naming
        ``directory_id`` commit, from the line it logs."""
        pattern = re.compile(r"voters now (.*) \(kraft\.version \d\), committed (\d+) ms after")
        for node in self.nodes.values():
            for line in node.log_path.read_text(errors="replace").splitlines():
                found = pattern.search(line)
                if found is not None and directory_id in found.group(1):
                    return int(found.group(2))
        raise AssertionError(f"no leader logged the change that added {directory_id}")


@contextmanager
def dynamic_quorum(root: Path) -> Iterator[DynamicQuorum]:
    quorum = DynamicQuorum(root)
    try:
        yield quorum
    finally:
        quorum.stop_all()


class AckSampler:
    """Counts acknowledged writes every few milliseconds on a thread, to measure how long
    writes stopped. A measurement, not a synchronisation: nothing waits on it."""

    def __init__(self, count: Callable[[], int]) -> None:
        self._count = count
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_EVERY_S):
            self.samples.append((time.monotonic(), self._count()))

    def __enter__(self) -> AckSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def availability(self, start: float, end: float) -> tuple[float, float]:
        """(share of WINDOW_S windows in [start, end) with an acknowledgement, longest time
        without one)."""
        inside = [(t, n) for t, n in self.samples if start <= t < end]
        if len(inside) < 2:
            return 0.0, end - start
        windows: dict[int, bool] = {}
        longest = 0.0
        last_change = inside[0][0]
        for (_, n0), (t1, n1) in itertools.pairwise(inside):
            index = int((t1 - start) / WINDOW_S)
            windows[index] = windows.get(index, False) or n1 > n0
            if n1 > n0:
                longest = max(longest, t1 - last_change)
                last_change = t1
        longest = max(longest, inside[-1][0] - last_change)
        total = max(1, int((end - start) / WINDOW_S))
        return sum(1 for i in range(total) if windows.get(i)) / total, longest


@dataclass
class Replacement:
    add_to_counting_s: float
    add_command_s: float
    dry_run_s: float
    leader_commit_ms: int
    """The leader's own account: its VotersRecord committed this long after it appended it."""
    """``add-controller --dry-run``: the tool's start-up alone, taken just before the add."""
    availability: float
    longest_gap_s: float
    observer_before_add: bool
    """The wiped node was listed as an observer under its new directory before it was added."""
    old_voter_stale: bool
    """Meanwhile the voter entry (old directory) made no progress: the wiped node was not
    counted."""
    final_voters: dict[int, str]
    new_directory: str
    old_directory: str
    acked: list[str] = field(default_factory=list)
    logs: dict[int, list[str]] = field(default_factory=dict)


def replace_dead_controller(root: Path) -> Replacement:
    with dynamic_quorum(root) as quorum:
        quorum.start_all()
        first = quorum.wait_for(lambda i: len(i.voters) == 3, "a leader of three voters")
        wait_until(lambda: quorum.acked_count() >= 40, "writes before the kill", DEADLINE_S)
        victim = first.followers[0].node_id
        old_directory = quorum.directory_id(victim)
        with AckSampler(quorum.acked_count) as sampler:
            killed_at = time.monotonic()
            quorum.nodes[victim].kill()
            quorum.wipe(victim)
            new_directory = quorum.directory_id(victim)
            quorum.start(victim)
            observing = quorum.wait_for(
                lambda i: any(
                    o.node_id == victim and o.directory_id == new_directory and o.log_end_offset > 0
                    for o in i.observers
                ),
                "the wiped controller to fetch as an observer",
            )
            stale_entry = next(v for v in observing.voters if v.node_id == victim)
            old_voter_stale = stale_entry.directory_id == old_directory and (
                stale_entry.log_end_offset < observing.high_watermark
                or stale_entry.log_end_offset < 0
            )
            removed = quorum.remove_controller(victim, old_directory)
            assert removed.returncode == 0, removed.stderr
            high_watermark = quorum.describe()
            assert high_watermark is not None
            dry_started = time.monotonic()
            dry = quorum.add_controller(victim, "--dry-run")
            dry_run_s = time.monotonic() - dry_started
            assert dry.returncode == 0 and "Would add" in dry.stdout, dry.stderr
            added_at = time.monotonic()
            added = quorum.add_controller(victim)
            add_command_s = time.monotonic() - added_at
            assert added.returncode == 0, added.stderr
            quorum.wait_for(
                lambda i: any(
                    v.node_id == victim
                    and v.directory_id == new_directory
                    and v.log_end_offset >= high_watermark.high_watermark
                    for v in i.voters
                ),
                "the new voter to count toward the high watermark",
            )
            counting_at = time.monotonic()
            leader_commit_ms = quorum.leader_commit_ms(new_directory)
            voters = {node_id: quorum.directory_id(node_id) for node_id in quorum.nodes}
            healthy = quorum.healthy(voters)
            healthy_at = time.monotonic()
            before = quorum.acked_count()
            wait_until(
                lambda: quorum.acked_count() >= before + 20,
                "writes after the replacement",
                DEADLINE_S,
            )
        availability, longest = sampler.availability(killed_at, healthy_at)
        acked = quorum.acked()
        logs = quorum.settle_and_read_logs()
    return Replacement(
        add_to_counting_s=counting_at - added_at,
        add_command_s=add_command_s,
        dry_run_s=dry_run_s,
        leader_commit_ms=leader_commit_ms,
        availability=availability,
        longest_gap_s=longest,
        observer_before_add=True,
        old_voter_stale=old_voter_stale,
        final_voters={v.node_id: v.directory_id for v in healthy.voters},
        new_directory=new_directory,
        old_directory=old_directory,
        acked=acked,
        logs=logs,
    )


@dataclass
class GrowShrink:
    grown_voters: list[int]
    shrunk_voters: list[int]
    acked: list[str]
    logs: dict[int, list[str]]


def grow_and_shrink(root: Path) -> GrowShrink:
    with dynamic_quorum(root) as quorum:
        quorum.start_all()
        quorum.wait_for(lambda i: len(i.voters) == 3, "a leader of three voters")
        wait_until(lambda: quorum.acked_count() >= 20, "writes before growing", DEADLINE_S)
        first_ids = sorted(quorum.nodes)
        joining = [max(first_ids) + 1, max(first_ids) + 2]
        for node_id in joining:
            quorum.new_controller(node_id)
            quorum.start(node_id)
        for node_id in joining:
            added = quorum.add_controller(node_id)
            assert added.returncode == 0, added.stderr
        voters = {node_id: quorum.directory_id(node_id) for node_id in quorum.nodes}
        grown = quorum.healthy(voters)
        before = quorum.acked_count()
        wait_until(lambda: quorum.acked_count() >= before + 20, "writes by five", DEADLINE_S)
        for node_id in reversed(joining):
            removed = quorum.remove_controller(node_id, voters.pop(node_id))
            assert removed.returncode == 0, removed.stderr
        shrunk = quorum.healthy(voters)
        for node_id in joining:
            quorum.nodes[node_id].signal(signal.SIGTERM)
            assert quorum.nodes[node_id].wait(DEADLINE_S) == 0
        before = quorum.acked_count()
        wait_until(lambda: quorum.acked_count() >= before + 20, "writes by three", DEADLINE_S)
        acked = quorum.acked()
        logs = quorum.settle_and_read_logs()
    return GrowShrink(
        sorted(v.node_id for v in grown.voters),
        sorted(v.node_id for v in shrunk.voters),
        acked,
        logs,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"machine: {describe_machine()}")
    print(f"load average at start: {load_average()}")
    runs: list[Replacement] = []
    for run in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="raftmeta-membership-") as directory:
            outcome = replace_dead_controller(Path(directory))
        runs.append(outcome)
        print(
            f"run {run + 1}: leader append -> commit {outcome.leader_commit_ms} ms, "
            f"add -> counting {outcome.add_to_counting_s * 1000:.0f} ms, "
            f"add-controller {outcome.add_command_s * 1000:.0f} ms (its --dry-run "
            f"{outcome.dry_run_s * 1000:.0f} ms), write availability "
            f"{outcome.availability:.1%} (longest gap {outcome.longest_gap_s * 1000:.0f} ms), "
            f"{len(outcome.acked)} writes acknowledged",
            flush=True,
        )

    def median(values: list[float]) -> float:
        return statistics.median(values)

    print(
        f"median of {len(runs)} replacements (kill -9 + lost disk of a follower, writer at "
        f"{LOAD_RATE:.0f}/s): leader append -> commit of the new VotersRecord "
        f"{median([r.leader_commit_ms for r in runs]):.0f} ms; "
        "add-controller -> new voter counting toward the high watermark "
        f"{median([r.add_to_counting_s for r in runs]) * 1000:.0f} ms; add-controller command "
        f"{median([r.add_command_s for r in runs]) * 1000:.0f} ms, of which tool start-up "
        f"(--dry-run) {median([r.dry_run_s for r in runs]) * 1000:.0f} ms; write availability "
        "from the "
        f"kill to three healthy voters {median([r.availability for r in runs]):.1%}, longest "
        f"gap {median([r.longest_gap_s for r in runs]) * 1000:.0f} ms"
    )
    print(f"load average at end: {load_average()} ({os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())


def _load_stopped(node: NodeProcess) -> bool:
    """Whether ``node`` has logged that its load generator ended (after SIGUSR1)."""
    return f"node {node.node_id}: load generator stopped" in node.log_path.read_text(
        errors="replace"
    )
