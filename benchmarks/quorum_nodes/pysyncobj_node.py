"""One PySyncObj voter in its own process, driven by ``benchmarks/quorum_bench.py``.

The same control protocol as ``raftmeta_node.py``: one JSON command per line on stdin, one JSON
answer per line on stdout, timings taken inside this process from the call of a ``@replicated``
append to its callback (which PySyncObj runs once the entry is committed and applied).

PySyncObj keeps its log in a file journal (``journalFile``, with the ``fullDumpFile`` its log
compaction needs to survive a restart) on its defaults otherwise. The
journal is a memory-mapped file that PySyncObj never fsyncs or msyncs while running, so its
figures are for a log that a power loss can lose. SIGTERM on the leader calls
``transferLeadership`` (Raft TimeoutNow) and exits once another node has taken over.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from types import FrameType
from typing import Any

from pysyncobj import SyncObj, SyncObjConf, replicated

RECORD = b"r" * 100
LEADER_STATE = 2
"""``pysyncobj.syncobj._RAFT_STATE.LEADER``."""


class Journal(SyncObj):  # type: ignore[misc]
    """A replicated append-only log of which only the count and size are kept in memory."""

    def __init__(self, self_address: str, others: list[str], conf: SyncObjConf) -> None:
        super().__init__(self_address, others, conf)
        self.count = 0
        self.size = 0

    @replicated
    def append(self, record: bytes) -> int:
        self.count += 1
        self.size += len(record)
        return self.count


class Bench:
    def __init__(self, address: str, others: list[str], journal_file: str) -> None:
        self.armed = False
        self.failover_commit: float | None = None
        conf = SyncObjConf(
            journalFile=journal_file,
            # Log compaction drops the journal's head; without the dump it writes, a restarted
            # node cannot rebuild its state and never applies again.
            fullDumpFile=journal_file + ".dump",
            onStateChanged=self._state_changed,
        )
        self.obj = Journal(address, others, conf)

    def _state_changed(self, old: int, new: int) -> None:
        print(f"{time.monotonic():.3f} state {old} -> {new}, armed {self.armed}", file=sys.stderr)
        if new == LEADER_STATE and self.armed:
            self._first_append()

    def _first_append(self) -> None:
        """Append one record; the node stays armed until one commits while it leads."""

        def committed(result: Any, error: Any) -> None:
            print(f"{time.monotonic():.3f} first append: {result} {error}", file=sys.stderr)
            if error == 0:
                if self.armed:
                    self.armed = False
                    self.failover_commit = time.monotonic()
            elif self.armed and self.obj._isLeader():
                self._first_append()

        self.obj.append(RECORD, callback=committed)

    def status(self) -> dict[str, Any]:
        status = self.obj.getStatus()
        leader = status.get("leader")
        leads = bool(self.obj._isLeader()) and self.obj.isReady()
        return {
            "running": True,
            "leader": leads,
            "leader_id": None if leader is None else str(leader),
            "epoch": status.get("raft_term"),
            "committed": status.get("commit_idx"),
            "applied": status.get("last_applied"),
            "raft_leader": bool(self.obj._isLeader()),
            "ready": bool(self.obj.isReady()),
        }

    def throughput(self, total: int, window: int) -> dict[str, Any]:
        slots = threading.Semaphore(window)
        finished = threading.Event()
        lock = threading.Lock()
        counts = {"remaining": total, "failures": 0}

        def done(result: Any, error: Any) -> None:
            with lock:
                if error != 0:
                    counts["failures"] += 1
                counts["remaining"] -= 1
                if counts["remaining"] == 0:
                    finished.set()
            slots.release()

        started = time.perf_counter()
        cpu_started = time.process_time()
        for _ in range(total):
            slots.acquire()
            self.obj.append(RECORD, callback=done)
        finished.wait()
        return {
            "seconds": time.perf_counter() - started,
            "records": total,
            "failures": counts["failures"],
            "cpu_seconds": time.process_time() - cpu_started,
        }

    def _one(self) -> float:
        committed = threading.Event()
        ended: list[float] = []

        def done(result: Any, error: Any) -> None:
            ended.append(time.perf_counter())
            committed.set()

        started = time.perf_counter()
        self.obj.append(RECORD, callback=done)
        committed.wait()
        return (ended[0] - started) * 1000

    def serial(self, count: int) -> dict[str, Any]:
        return {"latencies_ms": [self._one() for _ in range(count)]}

    def rate(self, per_s: float, seconds: float) -> dict[str, Any]:
        count = int(per_s * seconds)
        latencies: list[float] = []
        lock = threading.Lock()
        finished = threading.Event()

        def waiter(started: float) -> Any:
            def done(result: Any, error: Any) -> None:
                with lock:
                    latencies.append((time.perf_counter() - started) * 1000)
                    if len(latencies) == count:
                        finished.set()

            return done

        began = time.perf_counter()
        for i in range(count):
            delay = began + i / per_s - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            started = time.perf_counter()
            self.obj.append(RECORD, callback=waiter(started))
        finished.wait()
        achieved = count / (time.perf_counter() - began)
        return {"latencies_ms": latencies, "achieved_per_s": achieved}

    def command(self, request: dict[str, Any]) -> dict[str, Any]:
        name = request["cmd"]
        if name == "status":
            return self.status()
        if name == "throughput":
            return self.throughput(int(request["total"]), int(request["window"]))
        if name == "serial":
            return self.serial(int(request["count"]))
        if name == "rate":
            return self.rate(float(request["per_s"]), float(request["seconds"]))
        if name == "arm":
            self.failover_commit = None
            self.armed = True
            return {"armed": True}
        if name == "cpu":
            return {"cpu_s": time.process_time()}
        if name == "failover":
            return {"commit_at": self.failover_commit}
        if name == "profile":
            return {}
        raise ValueError(f"unknown command {name!r}")

    def hand_over(self) -> None:
        """Ask the most caught-up follower to campaign now, and leave once it leads."""
        obj = self.obj
        if obj._isLeader():
            outcome: list[Any] = []
            obj.transferLeadership(callback=lambda result, error: outcome.append(error))
            deadline = time.monotonic() + 2.0
            while obj._isLeader() and time.monotonic() < deadline:
                time.sleep(0.001)
            print(f"transferLeadership: {outcome}, leader: {obj._isLeader()}", file=sys.stderr)
        obj.destroy()
        os._exit(0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--address", required=True, help="host:port of this node")
    parser.add_argument("--others", required=True, help="host:port,... of the other voters")
    parser.add_argument("--journal", required=True, help="journal file path")
    args = parser.parse_args()
    # PySyncObj's own threads must not take SIGTERM: a thread that does leaves the handler
    # pending until this thread, blocked reading stdin, next runs Python code.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    bench = Bench(args.address, args.others.split(","), args.journal)

    def terminate(signum: int, frame: FrameType | None) -> None:
        bench.hand_over()

    signal.signal(signal.SIGTERM, terminate)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    sys.stdout.write(json.dumps({"event": "started", "address": args.address}) + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        try:
            answer = bench.command(json.loads(line))
        except Exception as error:  # answered to the driver rather than lost
            answer = {"error": repr(error)}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    bench.obj.destroy()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
