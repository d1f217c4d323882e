"""Judges a campaign: the history of what clients were told against what the nodes hold.

Read after every node has stopped, from the files alone:

* **lost**: an operation the client saw succeed whose topic is not in the final image;
* **echo**: an operation the client was told failed definitely (or TOPIC_ALREADY_EXISTS for
  its own unique name) whose topic is there anyway;
* **divergent logs**: two controllers holding different batches at the same offset;
* **divergent images**: two nodes (controllers, and brokers by their published status) whose
  images differ at the same offset.

Operations with an unknown outcome may be present or not; the report counts both ways.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field
from pathlib import Path

from analytics.readers import load_image
from analytics.sources import discover
from raftmeta.broker.status import read_status
from raftmeta.devkit.chaos.history import Operation, Outcome
from raftmeta.image import MetadataImage
from raftmeta.storage.codec import scan_batches
from raftmeta.storage.data_dir import METADATA_PARTITION_DIR


@dataclass
class Verdict:
    """What the checker found; ``violations`` is empty when the campaign passed."""

    acknowledged: int = 0
    unknown_present: int = 0
    unknown_absent: int = 0
    failed: int = 0
    lost: list[str] = field(default_factory=list)
    echoes: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    end_offset: int = -1


@dataclass(frozen=True, slots=True)
class NodeFiles:
    """One node's state read from disk: its log's batches by base offset and its image."""

    name: str
    batches: Mapping[int, tuple[int, int, str]]
    """Base offset -> (epoch, record count, hash of the payload)."""
    image: MetadataImage


def read_controller(name: str, data_dir: Path) -> NodeFiles:
    batches: dict[int, tuple[int, int, str]] = {}
    for segment in sorted((data_dir / METADATA_PARTITION_DIR).glob("*.log")):
        for batch in scan_batches(segment.read_bytes()).batches:
            digest = hashlib.blake2b(batch.payload, digest_size=16).hexdigest()
            batches[batch.base_offset] = (batch.epoch, batch.record_count, digest)
    image, _ = load_image(discover(data_dir)[0])
    return NodeFiles(name, batches, image)


def committed_part(node: NodeFiles, data_dir: Path, committed_end: int) -> NodeFiles:
    """``node``'s batches below ``committed_end``, and its image replayed up to there.

    A graceful stop still moves leadership, and a leader elected then appends (its epoch's
    first record, the fencing of brokers that stopped): such tails need not have committed,
    and each node may hold a different one. Only the prefix known committed must agree."""
    batches = {offset: b for offset, b in node.batches.items() if offset < committed_end}
    image, _ = load_image(discover(data_dir)[0], end_offset=committed_end)
    return NodeFiles(node.name, batches, image)


def compare_logs(nodes: Sequence[NodeFiles]) -> list[str]:
    """One line per offset where two controllers hold different batches."""
    problems: list[str] = []
    first = nodes[0]
    for other in nodes[1:]:
        for offset in sorted(first.batches.keys() & other.batches.keys()):
            if first.batches[offset] != other.batches[offset]:
                problems.append(
                    f"{first.name} and {other.name} hold different batches at offset {offset}: "
                    f"{first.batches[offset]} against {other.batches[offset]}"
                )
                break
    return problems


def compare_images(
    nodes: Sequence[NodeFiles], broker_status: Mapping[str, tuple[int, str] | None]
) -> list[str]:
    """Controllers' images must be equal when their offsets are; each broker's published
    digest must equal a controller's at the broker's offset when they stopped at the same one."""
    problems: list[str] = []
    by_offset: dict[int, tuple[str, str]] = {}
    for node in nodes:
        offset, digest = node.image.offset, node.image.digest()
        seen = by_offset.setdefault(offset, (node.name, digest))
        if seen[1] != digest:
            problems.append(f"{seen[0]} and {node.name} have different images at offset {offset}")
    for broker, status in broker_status.items():
        if status is None:
            continue
        offset, digest = status
        if offset in by_offset and by_offset[offset][1] != digest:
            problems.append(
                f"{broker}'s image differs from {by_offset[offset][0]}'s at offset {offset}"
            )
    return problems


def judge(
    operations: Sequence[Operation],
    controllers: Mapping[str, Path],
    broker_status_files: Mapping[str, Path],
    *,
    converged_at: int | None,
) -> Verdict:
    """Check ``operations`` against the stopped nodes' files. ``converged_at``: the offset
    below which every voter held the leader's whole, committed log once writing stopped, so
    their logs and images must be identical below it; None when they never converged (a
    voter may keep an uncommitted tail of an old epoch), and logs are not compared."""
    paths = list(controllers.values())
    nodes = [read_controller(name, path) for name, path in controllers.items()]
    status = {name: read_status(path) for name, path in broker_status_files.items()}
    # The image with the most applied is the one every acknowledged write must be in.
    newest = max(nodes, key=lambda node: node.image.offset).image
    verdict = tally(operations, {topic.name for topic in newest.topics.values()})
    verdict.end_offset = newest.offset
    if converged_at is not None:
        committed = [
            committed_part(node, path, converged_at)
            for node, path in zip(nodes, paths, strict=True)
        ]
        verdict.violations += compare_logs(committed)
        verdict.violations += compare_images(committed, status)
    return verdict


def tally(operations: Sequence[Operation], present: Set[str]) -> Verdict:
    """Each operation against whether its topic is in the final image."""
    verdict = Verdict()
    for op in operations:
        there = op.topic in present
        if op.outcome is Outcome.OK:
            verdict.acknowledged += 1
            if not there:
                verdict.lost.append(op.topic)
        elif op.outcome in (Outcome.FAILED, Outcome.ECHO):
            verdict.failed += op.outcome is Outcome.FAILED
            if there:
                verdict.echoes.append(f"{op.topic} ({op.error})")
        elif there:
            verdict.unknown_present += 1
        else:
            verdict.unknown_absent += 1
    if verdict.lost:
        verdict.violations.append(
            f"{len(verdict.lost)} acknowledged writes lost, e.g. {verdict.lost[:3]}"
        )
    if verdict.echoes:
        verdict.violations.append(
            f"{len(verdict.echoes)} writes happened although their clients were told they "
            f"failed, e.g. {verdict.echoes[:3]}"
        )
    return verdict
