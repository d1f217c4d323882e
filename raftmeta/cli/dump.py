"""``raftmeta log dump`` and ``raftmeta snapshot dump``: readable dumps of log segments and
snapshot files.

A dump only reads: it never runs recovery, so it shows a torn or corrupt tail (and where it
starts) instead of cutting it off. It holds the log to the rules recovery holds it to (each
segment starts where its name says and where the one before ended, offsets run on without gaps,
epochs never go back) and to the rules replay holds each batch to (its payload splits into as
many records as it claims, every record decodes). Whatever breaks one is shown where it is and
listed as damage, and any damage makes the dump fail (exit 1): a dump that exits 0 promises a log
a node could replay whole.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import errno
import json
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from raftmeta.cli.errors import CommandLineError
from raftmeta.cli.parser import add_actions
from raftmeta.raft.batch import Batch
from raftmeta.raft.control import decode_control_record
from raftmeta.records import RecordDecodeError, UserScramCredentialRecord, decode_record
from raftmeta.storage.codec import scan_batches
from raftmeta.storage.log import LOG_START_CHECKPOINT, segment_base_offset
from raftmeta.storage.snapshots import SnapshotReader

METADATA_PARTITION_DIR = "__cluster_metadata-0"


def register(commands: Any) -> None:
    log = commands.add_parser("log", help="inspect log segments")
    log_actions = add_actions(log, "log_command")
    log_dump = log_actions.add_parser("dump", help="print every batch and record of a log")
    log_dump.add_argument("directory", type=Path, help="metadata.log.dir or its log folder")
    log_dump.add_argument("--json", action="store_true", help="one JSON object per line")
    log_dump.set_defaults(handler=run)
    from raftmeta.cli import export

    export.register(log_actions)

    snapshot = commands.add_parser("snapshot", help="inspect snapshot files")
    snapshot_dump = add_actions(snapshot, "snapshot_command").add_parser(
        "dump", help="print a snapshot's records"
    )
    snapshot_dump.add_argument("file", type=Path, help="a .checkpoint file")
    snapshot_dump.add_argument("--json", action="store_true", help="one JSON object per line")
    snapshot_dump.set_defaults(handler=run)


class DamagedLog(Exception):
    """A segment that stops before its end: the dump shows what came before, then fails."""


def run(args: argparse.Namespace) -> int:
    from raftmeta.storage import StorageError

    damage: list[str] = []
    try:
        if args.command == "log":
            entries = dump_log(args.directory, damage)
        else:
            entries = dump_snapshot(args.file)
        render(entries, as_json=args.json, write=print)
    except OSError as error:
        where = error.filename or args.command
        raise CommandLineError(f"{where}: {error.strerror or error}") from error
    except StorageError as error:
        raise CommandLineError(str(error)) from error
    if damage:
        more = f" (and {len(damage) - 1} more damaged segments)" if len(damage) > 1 else ""
        raise CommandLineError(f"{damage[0]}{more}")
    return 0


REDACTED = "(redacted)"
REDACTED_SCRAM_FIELDS = ("salt", "stored_key", "server_key")
"""A SCRAM credential's keys let whoever holds them log in to this cluster's listeners, as
Kafka's dump tools know: a dump shows the user, mechanism and iterations only."""


def _plain(value: Any) -> Any:
    """Make a record's fields JSON-friendly: dataclasses to dicts, ids to text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def describe_record(record: bytes, *, control: bool) -> dict[str, Any]:
    if control:
        try:
            change = decode_control_record(record)
        except ValueError as error:
            return {"type": "Control", "error": str(error), "bytes": record.hex()}
        return {"type": type(change).__name__, **_plain(change)}
    try:
        decoded = decode_record(record)
    except (RecordDecodeError, ValueError) as error:
        return {"type": "Unknown", "error": str(error), "bytes": record.hex()}
    fields = _plain(decoded)
    if isinstance(decoded, UserScramCredentialRecord):
        fields.update(dict.fromkeys(REDACTED_SCRAM_FIELDS, REDACTED))
    return {"type": type(decoded).__name__, **fields}


def describe_batch(batch: Batch) -> dict[str, Any]:
    """The batch's header and records. A batch replay could not use (a payload that does not
    split into records, fewer or more records than the header says, a record that does not
    decode) gets a ``damage`` entry saying why, and is still shown as far as it goes."""
    entry: dict[str, Any] = {
        "base_offset": batch.base_offset,
        "last_offset": batch.last_offset,
        "epoch": batch.epoch,
        "record_count": batch.record_count,
        "timestamp_ms": batch.timestamp_ms,
        "control": batch.is_control,
    }
    try:
        payloads = batch.records()
    except (ValueError, TypeError) as error:
        entry["records"] = []
        entry["damage"] = f"payload does not split into records ({error})"
        return entry
    records = [describe_record(r, control=batch.is_control) for r in payloads]
    entry["records"] = records
    if len(records) != batch.record_count:
        entry["damage"] = f"holds {len(records)} records, its header says {batch.record_count}"
    else:
        bad = next((i for i, record in enumerate(records) if "error" in record), None)
        if bad is not None:
            entry["damage"] = f"record {bad} does not decode ({records[bad]['error']})"
    return entry


def segment_files(directory: Path) -> list[Path]:
    """The ``*.log`` files of a log directory, or of a node's metadata directory, in the log's
    order (by the base offset their names give; any other name last); an empty or missing one
    is an error, since a dump of nothing would look like an empty log."""
    if (directory / METADATA_PARTITION_DIR).is_dir():
        directory = directory / METADATA_PARTITION_DIR
    if not directory.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "not a directory", str(directory))
    segments = sorted(
        directory.glob("*.log"),
        key=lambda path: (
            segment_base_offset(path.name) is None,
            segment_base_offset(path.name) or 0,
            path.name,
        ),
    )
    if not segments:
        # A node whose latest snapshot covers its whole log holds no segment at all: its log
        # is empty from the snapshot on, which is not an error. A directory with neither is.
        if (directory / LOG_START_CHECKPOINT).is_file() or any(directory.glob("*.checkpoint")):
            return []
        raise FileNotFoundError(errno.ENOENT, "no log segments (*.log) here", str(directory))
    return segments


def dump_log(directory: Path, damage: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """Every batch of every segment. Where a segment stops before its end (a torn or corrupt
    tail, a batch out of place), does not start where its name or the segment before says, or
    holds a batch replay cannot use, the problem is shown in the dump and described in
    ``damage`` (file, and byte or offset)."""
    noted = damage if damage is not None else []
    next_offset: int | None = None
    last_epoch: int | None = None
    for segment in segment_files(directory):
        data = segment.read_bytes()
        base = segment_base_offset(segment.name)
        yield {"segment": segment.name, "bytes": len(data)}
        if base is None:
            yield {"segment": segment.name, "damage": "not a segment name; the log ignores it"}
            noted.append(f"{segment}: not a segment file name (20 digits .log)")
            continue
        if next_offset is not None and base != next_offset:
            problem = f"starts at offset {base}, but the segment before ends at {next_offset}"
            yield {"segment": segment.name, "damage": problem}
            noted.append(f"{segment}: {problem}")
        result = scan_batches(data, expected_base_offset=base, min_epoch=last_epoch)
        for batch in result.batches:
            entry = describe_batch(batch)
            yield entry
            if "damage" in entry:
                noted.append(f"{segment}: batch at offset {batch.base_offset} {entry['damage']}")
        if result.batches:
            next_offset = result.batches[-1].next_offset
            last_epoch = result.batches[-1].epoch
        elif next_offset is None:
            next_offset = base
        if not result.stop.clean:
            yield {"segment": segment.name, "stopped": result.stop.describe()}
            noted.append(f"{segment}: the log stops early, {result.stop.describe()}")


def dump_snapshot(path: Path) -> Iterator[dict[str, Any]]:
    reader = SnapshotReader(path)
    snapshot_id = reader.snapshot_id
    yield {
        "snapshot": path.name,
        "end_offset": snapshot_id.end_offset,
        "epoch": snapshot_id.epoch,
        "cluster_id": reader.cluster_id,
        "record_count": reader.record_count,
        "created_ms": reader.created_ms,
        "size": reader.size,
    }
    for batch in reader.batches():
        yield describe_batch(batch)


def render(
    entries: Iterable[dict[str, Any]], *, as_json: bool, write: Callable[[str], None]
) -> None:
    for entry in entries:
        if as_json:
            write(json.dumps(entry, sort_keys=True))
        elif "records" in entry:
            write(
                f"batch offsets {entry['base_offset']}..{entry['last_offset']} "
                f"epoch {entry['epoch']} records {entry['record_count']}"
                + (" control" if entry["control"] else "")
            )
            for record in entry["records"]:
                fields = " ".join(f"{k}={v}" for k, v in record.items() if k != "type")
                write(f"  {record['type']} {fields}")
            if "damage" in entry:
                write(f"  damage: {entry['damage']}")
        else:
            write(" ".join(f"{k}={v}" for k, v in entry.items()))
