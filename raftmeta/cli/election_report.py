"""What ``raftmeta leader-election`` prints: Kafka's three kinds of output line and exit status
0 or 1, from the answer for each partition.

Where Kafka prints a Java exception (``org.apache.kafka.common.errors.XyzException: text``),
raftmeta prints the error's Kafka code name instead (``PREFERRED_LEADER_NOT_AVAILABLE: text``):
the code is what raftmeta's protocol carries, and the name is the same one Kafka's error table
uses, so a script can still match on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from raftmeta.common.elections import ElectionType, TopicPartition
from raftmeta.errors import ErrorCode, KafkaError

TIMEOUT_LINE = "Timeout waiting for election results"
NOT_AUTHORIZED_LINE = "Not authorized to perform leader election"


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
