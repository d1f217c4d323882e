"""The files of ``raftmeta reassign-partitions``, in ``kafka-reassign-partitions.sh``'s formats.

Two formats, read with one line for each way a file can be wrong:

* the reassignment (``--reassignment-json-file``, and what ``--generate`` and the audit write):
  ``{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}``;
  ``log_dirs`` is optional and, as raftmeta's brokers keep no log directories, may only say
  ``"any"``;
* the topics to move (``--topics-to-move-json-file``): ``{"version":1,"topics":[{"topic":"t"}]}``.

Output is Kafka's: one JSON object on one line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from raftmeta.cli.text_files import UnreadableFile, read_text_file
from raftmeta.common.elections import TopicPartition

ANY_LOG_DIR = "any"


class ReassignmentFileError(Exception):
    """The file cannot be used; one line naming the file."""


def _load(path: Path) -> Any:
    try:
        text = read_text_file(path, "a JSON file")
    except UnreadableFile as error:
        raise ReassignmentFileError(str(error)) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ReassignmentFileError(
            f"{path}: not JSON: {error.msg} at line {error.lineno} column {error.colno}"
        ) from None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _versioned_list(document: Any, key: str, path: Path) -> list[Any]:
    if not isinstance(document, dict):
        raise ReassignmentFileError(f'{path}: expected a JSON object with "{key}"')
    version = document.get("version", 1)
    if version != 1:
        raise ReassignmentFileError(f"{path}: Not supported version field value {version}")
    entries = document.get(key)
    if not isinstance(entries, list):
        raise ReassignmentFileError(f'{path}: "{key}" must be a list')
    return entries


def read_reassignment(path: Path) -> dict[TopicPartition, tuple[int, ...]]:
    """The partitions and target replicas of a reassignment file, in file order."""
    entries = _versioned_list(_load(path), "partitions", path)
    if not entries:
        raise ReassignmentFileError(f"{path}: Partition reassignment list cannot be empty")
    targets: dict[TopicPartition, tuple[int, ...]] = {}
    for number, entry in enumerate(entries, start=1):
        where = f"{path}: partition entry {number}"
        if not isinstance(entry, dict):
            raise ReassignmentFileError(f"{where}: expected an object")
        topic, partition, replicas = (
            entry.get("topic"),
            entry.get("partition"),
            entry.get("replicas"),
        )
        if not isinstance(topic, str) or not topic:
            raise ReassignmentFileError(f'{where}: "topic" must be a non-empty string')
        if not isinstance(partition, int) or isinstance(partition, bool) or partition < 0:
            raise ReassignmentFileError(f'{where}: "partition" must be an int >= 0')
        name = TopicPartition(topic, partition)
        if not isinstance(replicas, list) or not all(_is_int(b) for b in replicas):
            raise ReassignmentFileError(f'{where}: "replicas" must be a list of broker ids')
        if not replicas:
            raise ReassignmentFileError(f"{path}: Partition replica list cannot be empty: {name}")
        if len(set(replicas)) != len(replicas):
            raise ReassignmentFileError(
                f"{path}: Partition replica lists may not contain duplicate entries: {name} "
                f"contains duplicate entries in {replicas}"
            )
        log_dirs = entry.get("log_dirs", [ANY_LOG_DIR] * len(replicas))
        if not isinstance(log_dirs, list) or len(log_dirs) != len(replicas):
            raise ReassignmentFileError(
                f"{path}: Size of replicas list {replicas} is different from size of log dirs "
                f"list {log_dirs} for partition {name}"
            )
        if any(log_dir != ANY_LOG_DIR for log_dir in log_dirs):
            raise ReassignmentFileError(
                f'{where}: log_dirs other than "any" name a broker\'s log directory, and '
                "raftmeta's brokers keep none"
            )
        if name in targets:
            raise ReassignmentFileError(f"{path}: Duplicate reassignment for partition {name}")
        targets[name] = tuple(replicas)
    return targets


def read_topics_to_move(path: Path) -> list[str]:
    """The topic names of a topics-to-move file, each once, in file order."""
    entries = _versioned_list(_load(path), "topics", path)
    topics: list[str] = []
    for number, entry in enumerate(entries, start=1):
        topic = entry.get("topic") if isinstance(entry, dict) else None
        if not isinstance(topic, str) or not topic:
            raise ReassignmentFileError(
                f'{path}: topic entry {number}: expected {{"topic": "name"}}'
            )
        if topic in topics:
            raise ReassignmentFileError(f"{path}: Duplicate topic {topic}")
        topics.append(topic)
    if not topics:
        raise ReassignmentFileError(f"{path}: the topic list is empty")
    return topics


def parse_broker_list(text: str, flag: str) -> list[int]:
    """``1,2,3`` as broker ids, each once; a one-line error naming ``flag`` otherwise."""
    ids: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part.lstrip("-").isdigit() or int(part) < 0:
            raise ReassignmentFileError(f"{flag}: {part!r} is not a broker id")
        if int(part) in ids:
            raise ReassignmentFileError(f"{flag}: duplicate broker id {part}")
        ids.append(int(part))
    return ids


def assignment_json(assignment: Mapping[TopicPartition, Sequence[int]]) -> str:
    """The reassignment format on one line, partitions sorted by topic then partition."""
    entries = [
        {
            "topic": name.topic,
            "partition": name.partition,
            "replicas": list(replicas),
            "log_dirs": [ANY_LOG_DIR] * len(replicas),
        }
        for name, replicas in sorted(
            assignment.items(), key=lambda item: (item[0].topic, item[0].partition)
        )
    ]
    return json.dumps({"version": 1, "partitions": entries}, separators=(",", ":"))
