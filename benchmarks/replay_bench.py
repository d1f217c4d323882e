"""Record encode, decode and replay for CreateTopics-shaped writes: this checkout against another
revision, side by side in one process.

Run: ``.venv/bin/python benchmarks/replay_bench.py [--baseline REF] [--groups 10000] [--runs 7]``

A CreateTopics of one topic with 3 partitions at RF 3 writes a group of five records: a
TopicRecord, three PartitionRecords and a RequestOutcomeRecord. For ``--groups`` such groups, on
an image holding six registered brokers, the benchmark times what the controller processes do
with them, per group:

* leader: build the records, apply each to the latest image (staging), encode them, pack them
  into a batch and encode the batch, then apply the records to the committed image;
* follower: scan the encoded batch (CRC check), split its payload, decode each record and apply
  the batch to its image;
* snapshot load: the final image's records (``to_records``) encoded, then decoded and replayed
  into a fresh image by ``MetadataImage.from_records``, per partition.

The baseline is ``git archive REF raftmeta`` unpacked into a temporary directory and imported
under its own module objects, so both versions run in this process, alternately, on the same
inputs (each first in every other round); every figure is the median over ``--runs`` runs of
each. The cyclic garbage collector is left on, as in the server, and collected before each
run. Figures are this process's CPU time, not wall time: on a shared machine the process is
preempted at random. Each run checks that both versions encode the same bytes and end with
equal images (by digest).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.machine import Report  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "replay_bench.txt"
MODULES = ("raftmeta.records", "raftmeta.image", "raftmeta.raft.batch", "raftmeta.storage.codec")
BROKERS = 6


@dataclass(frozen=True)
class Version:
    """One revision's modules, held apart from the other's."""

    label: str
    records: ModuleType
    image: ModuleType
    batch: ModuleType
    codec: ModuleType


def _import_from(root: Path, label: str) -> Version:
    """Imports the modules from the tree at ``root``, then removes them from ``sys.modules`` so
    the next import finds the other tree; functions keep their own module's globals."""
    for name in [name for name in sys.modules if name.split(".")[0] == "raftmeta"]:
        del sys.modules[name]
    sys.path.insert(0, str(root))
    try:
        loaded = [importlib.import_module(name) for name in MODULES]
    finally:
        sys.path.remove(str(root))
        for name in [name for name in sys.modules if name.split(".")[0] == "raftmeta"]:
            del sys.modules[name]
    return Version(label, *loaded)


def _unpack_baseline(ref: str, into: Path) -> str:
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", ref],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    archive = into / "baseline.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "-C", str(ROOT), "archive", ref, "raftmeta"], check=True, stdout=out)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    return commit


@dataclass(frozen=True)
class Inputs:
    """What each group's records are made of, fixed so both versions build equal records."""

    names: list[str]
    topic_ids: list[bytes]
    request_ids: list[bytes]
    replicas: list[tuple[tuple[int, ...], ...]]


def make_inputs(groups: int) -> Inputs:
    rng = __import__("random").Random(13)
    replicas = []
    for index in range(groups):
        first = index % BROKERS
        replicas.append(tuple(tuple((first + p + r) % BROKERS for r in range(3)) for p in range(3)))
    return Inputs(
        [f"topic-{index}" for index in range(groups)],
        [rng.randbytes(16) for _ in range(groups)],
        [rng.randbytes(16) for _ in range(groups)],
        replicas,
    )


def _brokers(version: Version) -> list[Any]:
    records = version.records
    endpoint = records.BrokerEndpoint("PLAINTEXT", "localhost", 9092, 0)
    return [
        records.RegisterBrokerRecord(b, bytes([b]) * 16, b, (endpoint,), (), None, False, False)
        for b in range(BROKERS)
    ]


@dataclass
class Figures:
    leader_s: float
    follower_s: float
    load_s: float
    digest: str
    wire: bytes


def run_once(version: Version, inputs: Inputs) -> Figures:
    records, image_module = version.records, version.image
    topic_record, partition_record = records.TopicRecord, records.PartitionRecord
    outcome_record = records.RequestOutcomeRecord
    encode_each, decode_record = records.encode_each, records.decode_record
    make_batch, encode_batch = version.batch.make_batch, version.codec.encode_batch
    scan_batches = version.codec.scan_batches
    latest, committed, follower = (image_module.MetadataImage() for _ in range(3))
    for image in (latest, committed, follower):
        image.apply_batch(_brokers(version), 0)
    offset = BROKERS
    wires: list[bytes] = []
    outcome = b"\x91\x93\x00\xc0\x00"
    gc.collect()
    clock = time.process_time  # CPU time: a shared machine preempts, wall time lies
    started = clock()
    for index, name in enumerate(inputs.names):
        topic_id = inputs.topic_ids[index]
        group = [topic_record(name, topic_id)]
        for partition_id, replicas in enumerate(inputs.replicas[index]):
            group.append(
                partition_record(
                    partition_id=partition_id,
                    topic_id=topic_id,
                    replicas=replicas,
                    isr=replicas,
                    leader=replicas[0],
                    leader_epoch=0,
                    partition_epoch=0,
                )
            )
        group.append(outcome_record(inputs.request_ids[index], "CreateTopics", index, outcome))
        apply = latest.apply
        for position, record in enumerate(group):
            apply(record, offset + position)
        wires.append(encode_batch(make_batch(offset, 1, encode_each(group), timestamp_ms=index)))
        committed.apply_batch(group, offset)
        offset += len(group)
    leader_s = clock() - started
    gc.collect()
    started = clock()
    expected = BROKERS
    for wire in wires:
        for batch in scan_batches(wire, expected_base_offset=expected).batches:
            follower.apply_batch(
                [decode_record(data) for data in batch.records()], batch.base_offset
            )
            expected = batch.next_offset
    follower_s = clock() - started
    digest = follower.digest()
    if committed.digest() != digest or latest.digest() != digest:
        raise SystemExit(f"{version.label}: leader and follower images differ")
    snapshot = encode_each(follower.to_records())
    gc.collect()
    started = clock()
    loaded = image_module.MetadataImage.from_records(
        (decode_record(data) for data in snapshot), follower.offset
    )
    load_s = clock() - started
    if loaded.digest() != digest:
        raise SystemExit(f"{version.label}: the loaded snapshot differs from the image")
    return Figures(leader_s, follower_s, load_s, digest, b"".join(wires))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", default="main", help="git revision to compare against")
    parser.add_argument("--groups", type=int, default=10_000, help="CreateTopics record groups")
    parser.add_argument("--runs", type=int, default=7, help="runs of each version (median shown)")
    args = parser.parse_args()
    if args.groups < 1 or args.runs < 1:
        print("replay_bench: --groups and --runs must be at least 1", file=sys.stderr)
        return 2
    report = Report(RESULTS)
    report.start()
    with tempfile.TemporaryDirectory(prefix="replay-bench-") as scratch:
        try:
            commit = _unpack_baseline(args.baseline, Path(scratch))
        except subprocess.CalledProcessError:
            print(f"replay_bench: cannot read revision {args.baseline!r}", file=sys.stderr)
            return 2
        baseline = _import_from(Path(scratch) / "tree", f"baseline {args.baseline} ({commit})")
    current = _import_from(ROOT, "this checkout")
    inputs = make_inputs(args.groups)
    figures: dict[str, list[Figures]] = {baseline.label: [], current.label: []}
    for run in range(args.runs):
        # Alternate which goes first: the second runs on a heap the first has just freed.
        for version in (baseline, current) if run % 2 == 0 else (current, baseline):
            figures[version.label].append(run_once(version, inputs))
    first = [runs[0] for runs in figures.values()]
    if first[0].wire != first[1].wire or first[0].digest != first[1].digest:
        raise SystemExit("the two versions encode different bytes or build different images")
    partitions = 3 * args.groups
    report.out(
        f"{args.groups} CreateTopics groups (TopicRecord + 3 PartitionRecords + "
        f"RequestOutcomeRecord) on {BROKERS} brokers; medians of {args.runs} runs each, "
        "interleaved; equal bytes and images checked"
    )
    rows: list[tuple[str, Callable[[Figures], float], float, str]] = [
        ("leader: build, stage, encode, commit", lambda f: f.leader_s, args.groups, "group"),
        ("follower: scan, decode, apply", lambda f: f.follower_s, args.groups, "group"),
        ("snapshot load: decode + from_records", lambda f: f.load_s, partitions, "partition"),
    ]
    report.out(f"{'':40s} {'baseline':>12s} {'this':>12s} {'this/base':>10s}")
    for title, pick, count, unit in rows:
        base = statistics.median(pick(run) for run in figures[baseline.label]) / count
        this = statistics.median(pick(run) for run in figures[current.label]) / count
        report.out(
            f"{title:40s} {base * 1e6:9.2f} us {this * 1e6:9.2f} us {this / base:9.2f}x  "
            f"(per {unit})"
        )
    report.out(f"baseline: {baseline.label}")
    report.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
