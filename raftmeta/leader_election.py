"""The pure part of ``raftmeta leader-election``: what the user asked for, and what to print.

The command mirrors ``kafka-leader-election.sh`` (KIP-460) so that scripts written for Kafka
work unchanged: the same options, the same validation messages, the same three kinds of output
line and exit status 0 or 1. Everything here is free of I/O apart from reading the two files
the user names, so each rule is tested on its own; ``raftmeta.commands.leader_election`` wires
it to the AdminClient.

Where Kafka prints a Java exception (``org.apache.kafka.common.errors.XyzException: text``),
raftmeta prints the error's Kafka code name instead (``PREFERRED_LEADER_NOT_AVAILABLE: text``):
the code is what raftmeta's protocol carries, and the name is the same one Kafka's error table
uses, so a script can still match on it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from raftmeta.common.elections import ElectionType, TopicPartition
from raftmeta.config import ConfigError, parse_properties
from raftmeta.errors import ErrorCode, KafkaError

DEFAULT_API_TIMEOUT_MS = 30_000
"""How long the tool waits for the whole answer unless ``default.api.timeout.ms`` says."""

REQUEST_TIMEOUT_MS = 15_000
"""The deadline the request carries to the controller unless ``request.timeout.ms`` says."""

TARGET_OPTIONS = ("topic", "all-topic-partitions", "path-to-json-file")

TIMEOUT_LINE = "Timeout waiting for election results"
NOT_AUTHORIZED_LINE = "Not authorized to perform leader election"


class ElectionCommandError(Exception):
    """Something the user must fix; the message is the one line the command prints."""


@dataclass(frozen=True, slots=True)
class AdminSettings:
    """What ``--admin.config`` may set: who the caller is and how long to wait."""

    bearer_token: str | None = None
    request_timeout_ms: int = REQUEST_TIMEOUT_MS
    default_api_timeout_ms: int = DEFAULT_API_TIMEOUT_MS
    ignored_keys: tuple[str, ...] = ()
    """Keys of the file raftmeta has no use for; the command warns about them, as Kafka does."""


@dataclass(frozen=True, slots=True)
class ElectionRequest:
    """A validated command line: the election to ask for and where to send it."""

    bootstrap_server: str
    election_type: ElectionType
    partitions: tuple[TopicPartition, ...] | None
    """``None`` asks for every partition (``--all-topic-partitions``)."""
    admin: AdminSettings


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
    given = [topic is not None, all_topic_partitions, path_to_json_file is not None]
    if sum(given) != 1:
        raise ElectionCommandError(
            "One and only one of the following options is required: " + ", ".join(TARGET_OPTIONS)
        )
    if topic is not None and partition is None:
        raise ElectionCommandError("Missing required option(s): partition")
    if topic is None and partition is not None:
        raise ElectionCommandError("Option partition is only allowed if topic is used")
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
    admin = read_admin_config(Path(admin_config)) if admin_config is not None else AdminSettings()
    return ElectionRequest(bootstrap_server.strip(), parsed_type, partitions, admin)


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
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ElectionCommandError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ElectionCommandError(f"{path}: cannot read it: {error}") from None
    return parse_partitions_json(text)


def parse_partitions_json(text: str) -> tuple[TopicPartition, ...]:
    """Reads ``{"partitions": [{"topic": "t", "partition": 0}, ...]}``; duplicates are refused.

    Kafka refuses a file naming a partition twice rather than electing it twice; the partitions
    keep the file's order.
    """
    try:
        data = json.loads(text)
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


# --- --admin.config --------------------------------------------------------------------------

_TIMEOUT_KEYS = ("request.timeout.ms", "default.api.timeout.ms")
ADMIN_KEYS = ("bearer.token", *_TIMEOUT_KEYS)


def read_admin_config(path: Path) -> AdminSettings:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ElectionCommandError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ElectionCommandError(f"{path}: cannot read it: {error}") from None
    settings, unknown = parse_admin_config(text)
    return dataclasses.replace(settings, ignored_keys=tuple(unknown))


def parse_admin_config(text: str) -> tuple[AdminSettings, list[str]]:
    """The settings, and the keys raftmeta does not know (Kafka warns about those and goes on).

    Kafka's client settings the tool has no use for here (``security.protocol``, SASL options)
    are among the unknown keys: raftmeta's only credential is a bearer token.
    """
    try:
        properties = parse_properties(text)
    except ConfigError as error:
        raise ElectionCommandError(f"admin.config: {error}") from None
    timeouts: dict[str, int] = {}
    for key in _TIMEOUT_KEYS:
        if key in properties:
            timeouts[key] = _timeout_value(key, properties[key])
    token = properties.get("bearer.token")
    if token is not None:
        token = token.strip()
        if not token:
            raise ElectionCommandError("Invalid value for configuration bearer.token: empty")
    settings = AdminSettings(
        bearer_token=token,
        request_timeout_ms=timeouts.get("request.timeout.ms", REQUEST_TIMEOUT_MS),
        default_api_timeout_ms=timeouts.get("default.api.timeout.ms", DEFAULT_API_TIMEOUT_MS),
    )
    unknown = sorted(key for key in properties if key not in ADMIN_KEYS)
    return settings, unknown


def ignored_key_warning(key: str) -> str:
    """The warning for a key ``--admin.config`` set that nothing reads (Kafka's wording)."""
    return f"The configuration '{key}' was supplied but isn't a known config."


def _timeout_value(key: str, raw: str) -> int:
    value = raw.strip()
    try:
        number = int(value)
    except ValueError:
        raise ElectionCommandError(
            f"Invalid value {value} for configuration {key}: Not a number of type INT"
        ) from None
    if number < 0:
        raise ElectionCommandError(
            f"Invalid value {number} for configuration {key}: Value must be at least 0"
        )
    return number


# --- output ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Report:
    """What the command prints on stdout and the status it exits with."""

    lines: tuple[str, ...]
    failed: int
    """How many partitions could not be elected; any makes the exit status 1."""

    @property
    def exit_status(self) -> int:
        return 1 if self.failed else 0


def error_code_of(error: BaseException) -> ErrorCode | None:
    return error.code if isinstance(error, KafkaError) else None


def describe_error(error: BaseException) -> str:
    """``NAME: message`` for a Kafka error (the code's name standing in for Kafka's exception
    class), ``ExceptionType: message`` for anything else."""
    code = error_code_of(error)
    if code is not None:
        assert isinstance(error, KafkaError)
        return f"{code.name}: {error.message}"
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def report(
    election_type: ElectionType, results: Mapping[TopicPartition, BaseException | None]
) -> Report:
    """Sorts the results into the three buckets of Kafka's tool and renders their lines.

    Succeeded and already-valid partitions are listed on one line each, sorted so the output is
    stable; each failure gets its own line. ELECTION_NOT_NEEDED is the "already elected" bucket,
    as in Kafka, and never counts as a failure.
    """
    succeeded: list[TopicPartition] = []
    not_needed: list[TopicPartition] = []
    failed: list[tuple[TopicPartition, BaseException]] = []
    for partition in sorted(results):
        error = results[partition]
        if error is None:
            succeeded.append(partition)
        elif error_code_of(error) is ErrorCode.ELECTION_NOT_NEEDED:
            not_needed.append(partition)
        else:
            failed.append((partition, error))
    name = election_type.name
    lines: list[str] = []
    if succeeded:
        lines.append(
            f"Successfully completed leader election ({name}) for partitions {_join(succeeded)}"
        )
    if not_needed:
        lines.append(f"Valid replica already elected for partitions {_join(not_needed)}")
    for partition, error in failed:
        lines.append(
            f"Error completing leader election ({name}) for partition: {partition}: "
            f"{describe_error(error)}"
        )
    return Report(tuple(lines), len(failed))


def failure_summary(failed: int) -> str:
    """The stderr line after the per-partition errors, as Kafka's tool words it."""
    return f"{failed} replica(s) could not be elected"


def request_failure_line(error: BaseException) -> str:
    """The one stdout line for a request that failed as a whole (no per-partition answer).

    A timeout, whether the client's own deadline or the controller's REQUEST_TIMED_OUT, and a
    refused authorization get Kafka's fixed lines; anything else names its error.
    """
    code = error_code_of(error)
    if isinstance(error, TimeoutError) or code is ErrorCode.REQUEST_TIMED_OUT:
        return TIMEOUT_LINE
    if code is ErrorCode.CLUSTER_AUTHORIZATION_FAILED:
        return NOT_AUTHORIZED_LINE
    return f"Error completing leader election: {describe_error(error)}"


def _join(partitions: Iterable[TopicPartition]) -> str:
    return ", ".join(str(partition) for partition in partitions)
