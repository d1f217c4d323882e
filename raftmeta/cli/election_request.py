"""What ``raftmeta leader-election`` was asked for: its options checked in Kafka's order and
with Kafka's messages, and the partitions file read.

The command mirrors ``kafka-leader-election.sh`` (KIP-460) so that scripts written for Kafka
work unchanged. Everything here is free of I/O apart from reading the files the user names, so
each rule is tested on its own; :mod:`raftmeta.cli.leader_election` wires it to the AdminClient
and :mod:`raftmeta.cli.election_report` says what came of it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from raftmeta.cli.client_config import ClientConfigError, ClientSettings, read_client_config
from raftmeta.cli.text_files import UnreadableFile, read_text_file
from raftmeta.common.elections import ElectionType, TopicPartition

TARGET_OPTIONS = ("topic", "all-topic-partitions", "path-to-json-file")


class ElectionCommandError(Exception):
    """Something the user must fix; the message is the one line the command prints."""


@dataclass(frozen=True, slots=True)
class ElectionRequest:
    """A validated command line: the election to ask for and where to send it."""

    bootstrap_server: str
    election_type: ElectionType
    partitions: tuple[TopicPartition, ...] | None
    """``None`` asks for every partition (``--all-topic-partitions``)."""
    admin: ClientSettings
    """What ``--admin.config`` set (the defaults without one)."""


# --- validation ------------------------------------------------------------------------------


def parse_election_type(text: str) -> ElectionType:
    """PREFERRED or UNCLEAN in any case, as Kafka's option converter accepts them."""
    try:
        election_type = ElectionType[text.strip().upper()]
    except KeyError:
        election_type = ElectionType.ONLINE
    if election_type is ElectionType.ONLINE:
        raise ElectionCommandError(
            f"Cannot parse argument '{text}' of option election-type: expected PREFERRED or UNCLEAN"
        )
    return election_type


def validate(
    *,
    bootstrap_server: str | None,
    election_type: str | None,
    topic: str | None,
    partition: str | None,
    all_topic_partitions: bool,
    path_to_json_file: str | None,
    admin_config: str | None,
) -> ElectionRequest:
    """Checks the options in Kafka's order and with its messages; reads the named files."""
    missing = [
        name
        for name, value in (
            ("bootstrap-server", bootstrap_server),
            ("election-type", election_type),
        )
        if value is None
    ]
    if missing:
        raise ElectionCommandError(f"Missing required option(s): {', '.join(missing)}")
    assert bootstrap_server is not None and election_type is not None
    if topic is None and partition is not None:
        # Before the choice of target, so that --partition alone is told what it lacks.
        raise ElectionCommandError("Option partition is only allowed if topic is used")
    given = [topic is not None, all_topic_partitions, path_to_json_file is not None]
    if sum(given) != 1:
        raise ElectionCommandError(
            "One and only one of the following options is required: " + ", ".join(TARGET_OPTIONS)
        )
    if topic is not None and partition is None:
        raise ElectionCommandError("Missing required option(s): partition")
    if not bootstrap_server.strip():
        raise ElectionCommandError("Option bootstrap-server needs at least one HOST:PORT")
    parsed_type = parse_election_type(election_type)
    partitions: tuple[TopicPartition, ...] | None
    if topic is not None:
        assert partition is not None
        partitions = (TopicPartition(topic, _partition_number(partition)),)
    elif path_to_json_file is not None:
        partitions = read_partitions_file(Path(path_to_json_file))
    else:
        partitions = None
    admin = _client_settings(admin_config)
    return ElectionRequest(bootstrap_server.strip(), parsed_type, partitions, admin)


def _client_settings(admin_config: str | None) -> ClientSettings:
    if admin_config is None:
        return ClientSettings()
    try:
        return read_client_config(Path(admin_config))
    except ClientConfigError as error:
        raise ElectionCommandError(str(error)) from None


def _partition_number(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        raise ElectionCommandError(
            f"Cannot parse argument '{text}' of option partition: not an integer"
        ) from None
    if number < 0:
        raise ElectionCommandError(f"Option partition must not be negative, got {number}")
    return number


# --- the JSON file ---------------------------------------------------------------------------


def read_partitions_file(path: Path) -> tuple[TopicPartition, ...]:
    try:
        text = read_text_file(path, "a JSON file")
    except UnreadableFile as error:
        raise ElectionCommandError(str(error)) from None
    return parse_partitions_json(text)


def parse_partitions_json(text: str) -> tuple[TopicPartition, ...]:
    """Reads ``{"partitions": [{"topic": "t", "partition": 0}, ...]}``; duplicates are refused.

    Kafka refuses a file naming a partition twice rather than electing it twice; the partitions
    keep the file's order.
    """
    try:
        data = json.loads(text)
    except RecursionError:
        raise ElectionCommandError(
            "Replica election data is nested too deeply to be a partitions list"
        ) from None
    except json.JSONDecodeError as error:
        raise ElectionCommandError(
            f"Replica election data is not valid JSON: {error.msg} "
            f"(line {error.lineno} column {error.colno})"
        ) from None
    if not isinstance(data, dict) or "partitions" not in data:
        raise ElectionCommandError('Replica election data is missing the "partitions" field')
    entries = data["partitions"]
    if not isinstance(entries, list):
        raise ElectionCommandError('Replica election data: "partitions" must be a list')
    partitions: list[TopicPartition] = []
    for position, entry in enumerate(entries):
        partitions.append(_json_partition(entry, position))
    duplicates = _duplicates(partitions)
    if duplicates:
        raise ElectionCommandError(
            "Replica election data contains duplicate partitions: "
            + ",".join(str(partition) for partition in duplicates)
        )
    return tuple(partitions)


def _json_partition(entry: object, position: int) -> TopicPartition:
    where = f'Replica election data: entry {position} of "partitions"'
    if not isinstance(entry, dict):
        raise ElectionCommandError(f'{where} must be an object with "topic" and "partition"')
    topic = entry.get("topic")
    partition = entry.get("partition")
    if not isinstance(topic, str) or not topic:
        raise ElectionCommandError(f'{where} needs "topic" as a non-empty string')
    if isinstance(partition, bool) or not isinstance(partition, int) or partition < 0:
        raise ElectionCommandError(f'{where} needs "partition" as a non-negative integer')
    return TopicPartition(topic, partition)


def _duplicates(partitions: Sequence[TopicPartition]) -> list[TopicPartition]:
    seen: set[TopicPartition] = set()
    repeated: dict[TopicPartition, None] = {}
    for partition in partitions:
        if partition in seen:
            repeated[partition] = None
        seen.add(partition)
    return list(repeated)
