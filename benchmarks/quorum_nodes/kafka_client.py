"""Kafka-wire CreateTopics clients in a process of their own, for ``kafka_create_topics.py``.

Each client is a confluent-kafka ``AdminClient`` (librdkafka) of its own, bootstrapped to the
controllers' KAFKA listeners, sending one ``CreateTopics`` of one topic at a time, each awaited
before the next, as the gRPC column's clients do. ``--clients`` above 1 runs that many clients
on threads of this one process; the driver runs one process per client instead when that
reaches more (librdkafka's own threads and the GIL share one process otherwise).

The driver and this process speak one JSON object per line: this process prints
``{"ready": true}`` once every client has created one untimed topic (opening its connections
and finding the active controller), waits for a line on stdin, runs the timed creates and
prints ``began``/``ended`` (``time.monotonic()``, the same clock in every process on Linux),
the latencies in ms, how many creates answered TOPIC_ALREADY_EXISTS after an internal resend,
and the CPU this process spent while timed. A failure prints ``{"error": ...}`` and exits 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

ANSWER_TIMEOUT_S = 60.0
OPERATION_TIMEOUT_S = 30.0
"""Sent as CreateTopics' ``timeout_ms``, the 30 s the gRPC column's requests carry."""


LOG_LEVEL = 4
"""librdkafka's warnings and worse: its informational lines (a probe client destroyed with an
event still queued, say) would interleave with the figures."""


def admin_client(bootstrap: str) -> Any:
    return AdminClient({"bootstrap.servers": bootstrap, "log_level": LOG_LEVEL})


def controller_named(bootstrap: str, deadline_s: float) -> None:
    """Until Metadata on the KAFKA listeners names the active controller: a client started
    before the controllers have registered their KAFKA listeners (KIP-919) finds none and
    waits for librdkafka's next periodic refresh, minutes later."""
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            if admin_client(bootstrap).list_topics(timeout=2).controller_id >= 0:
                return
        except KafkaException:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"no active controller named on {bootstrap} in {deadline_s:.0f} s")
        time.sleep(0.2)


class Creator:
    """One AdminClient creating one topic per request, ``partitions`` x ``replication_factor``."""

    def __init__(self, bootstrap: str, partitions: int, replication_factor: int) -> None:
        self.client = admin_client(bootstrap)
        self.partitions = partitions
        self.replication_factor = replication_factor
        self.resent = 0

    def create(self, name: str) -> None:
        (future,) = self.client.create_topics(
            [NewTopic(name, self.partitions, self.replication_factor)],
            operation_timeout=OPERATION_TIMEOUT_S,
            request_timeout=ANSWER_TIMEOUT_S,
        ).values()
        try:
            future.result(ANSWER_TIMEOUT_S)
        except KafkaException as failure:
            error = failure.args[0]
            if error.code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise
            # Names are unique: this request's own earlier attempt created it, and the client
            # sent it again after a NOT_CONTROLLER that followed the commit.
            self.resent += 1


def run_clients(
    creators: Sequence[Creator], prefix: str, first_index: int, count: int
) -> dict[str, Any]:
    """Each creator on a thread of its own, ``count`` creates in turn; the figures to print."""
    latencies: list[float] = []
    lock = threading.Lock()

    def client(offset: int, creator: Creator) -> None:
        mine = []
        for number in range(count):
            began = time.perf_counter()
            creator.create(f"{prefix}-{first_index + offset}-{number}")
            mine.append(1000 * (time.perf_counter() - began))
        with lock:
            latencies.extend(mine)

    cpu_began = time.process_time()
    began = time.monotonic()
    with ThreadPoolExecutor(len(creators)) as pool:
        for done in [pool.submit(client, offset, c) for offset, c in enumerate(creators)]:
            done.result()
    ended = time.monotonic()
    return {
        "began": began,
        "ended": ended,
        "latencies_ms": latencies,
        "resent": sum(creator.resent for creator in creators),
        "cpu_s": time.process_time() - cpu_began,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--prefix", required=True, help="topic names: PREFIX-CLIENT-NUMBER")
    parser.add_argument("--count", type=int, required=True, help="timed creates per client")
    parser.add_argument("--clients", type=int, default=1, help="clients (threads) here")
    parser.add_argument("--first-index", type=int, default=0, help="this process's first client")
    parser.add_argument("--partitions", type=int, default=1)
    parser.add_argument("--replication-factor", type=int, default=3)
    args = parser.parse_args(argv)
    try:
        creators = [
            Creator(args.bootstrap, args.partitions, args.replication_factor)
            for _ in range(args.clients)
        ]
        with ThreadPoolExecutor(len(creators)) as pool:
            warm = [
                pool.submit(creator.create, f"{args.prefix}-{args.first_index + offset}-warm")
                for offset, creator in enumerate(creators)
            ]
            for done in warm:
                done.result()
        print(json.dumps({"ready": True}), flush=True)
        if not sys.stdin.readline():
            return 0  # the driver gave up before the start
        figures = run_clients(creators, args.prefix, args.first_index, args.count)
    except Exception as failure:  # reported to the driver, which raises it
        print(json.dumps({"error": repr(failure)}), flush=True)
        return 1
    print(json.dumps(figures), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
