"""Checking a cluster's log before it is audited: whole, or damaged and where.

The readers stop quietly where a segment stops holding valid batches, as a node recovering
from a crash does; for an audit that is wrong, since a log cut in half reads as a smaller,
healthy cluster. So before anything is read, every segment is checked against what was
promised for it:

- an export's manifest (:mod:`analytics.manifest`) promises each file, its size and the
  offsets it holds: a file that is missing, shorter or longer, or holds other offsets is damaged;
- without a manifest (a node's own directory) the segment headers promise: every byte of a
  segment must belong to a whole batch with a good CRC, and each segment must start where the
  one before it ends.

A damaged log is an error unless the caller allows a partial read; then the source is cut
back to the whole prefix of its log (:attr:`~analytics.sources.Source.log_end`) and the damage
is returned, for the report to say what is missing.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from dataclasses import dataclass

from analytics import files
from analytics.manifest import Manifest, ManifestError, parse_manifest
from analytics.sources import AnalyticsInputError, Source
from raftmeta.storage.codec import scan_batches


@dataclass(frozen=True, slots=True)
class Damage:
    """Where a cluster's files stop matching what was promised for them."""

    cluster: str
    file: str
    position: int
    """The byte of ``file`` where the damage starts (0 for a missing file)."""
    problem: str
    readable_end: int | None
    """The offset the log is whole up to; ``None`` when no batch of it is."""
    promised_end: int | None = None
    """The offset the manifest promises the log reaches, when there is one."""
    in_log: bool = True
    """False for a snapshot the manifest lists: the log is still read whole."""

    def describe(self) -> str:
        """One line naming the file and the byte offset."""
        return f"{self.file}: {self.problem} at byte {self.position}"

    def partial_note(self) -> str:
        """What an audit that reads around the damage is missing."""
        if not self.in_log:
            reach = "the state and events come from the snapshots and log that remain"
        elif self.readable_end is None:
            reach = "none of its log is read"
            if self.promised_end is not None:
                reach += f" (the manifest promises offsets up to {self.promised_end})"
        else:
            reach = f"its log is read up to offset {self.readable_end}"
            if self.promised_end is not None:
                reach += f" of {self.promised_end}"
        return f"cluster {self.cluster}: {self.describe()}; {reach}"


@dataclass(frozen=True, slots=True)
class CheckedSources:
    sources: list[Source]
    """The sources, cut back to the whole prefix of each damaged log."""
    damage: list[Damage]

    @property
    def nothing_readable(self) -> bool:
        """No source has a snapshot or a single whole batch of log: all of it is damage."""
        damaged = {entry.cluster: entry for entry in self.damage}
        return bool(self.sources) and all(
            source.snapshot is None
            and source.cluster in damaged
            and damaged[source.cluster].readable_end is None
            for source in self.sources
        )


class DamagedInputError(AnalyticsInputError):
    """A log that does not hold what was promised for it; the message is one line."""

    def __init__(self, damage: list[Damage]) -> None:
        first = damage[0].describe()
        more = f" (and {len(damage) - 1} more damaged cluster(s))" if len(damage) > 1 else ""
        super().__init__(
            f"{first}{more}; --allow-partial audits what is whole and says what is missing"
        )
        self.damage = damage


def check_sources(sources: Iterable[Source], *, allow_partial: bool = False) -> CheckedSources:
    """Every source checked; :class:`DamagedInputError` on damage unless ``allow_partial``."""
    checked: list[Source] = []
    damage: list[Damage] = []
    for source in sources:
        kept, found = check_source(source)
        checked.append(kept)
        if found is not None:
            damage.append(found)
    result = CheckedSources(checked, damage)
    if damage and not allow_partial and not result.nothing_readable:
        raise DamagedInputError(damage)
    return result


def _manifest(source: Source) -> Manifest | None:
    if source.manifest is None:
        return None
    try:
        return parse_manifest(files.read_all(source.manifest))
    except ManifestError as error:
        raise AnalyticsInputError(
            f"{source.manifest}: not a raftmeta export manifest: {error}"
        ) from None
    except OSError as error:
        raise AnalyticsInputError(f"{source.manifest}: cannot read it ({error})") from None


def check_source(source: Source) -> tuple[Source, Damage | None]:
    """``source`` cut back to where its log is whole, and the first damage, if any."""
    manifest = _manifest(source)
    if manifest is not None:
        return _check_against_manifest(source, manifest)
    return _check_by_headers(source)


def _sibling(source: Source, name: str) -> str:
    assert source.manifest is not None
    if files.is_remote(source.manifest):
        base, _, query = source.manifest.partition("?")
        joined = base.rsplit("/", 1)[0] + "/" + name
        return f"{joined}?{query}" if query else joined
    return os.path.join(os.path.dirname(source.manifest), name)


def _check_against_manifest(source: Source, manifest: Manifest) -> tuple[Source, Damage | None]:
    promised = manifest.log_end

    def damage(file: str, position: int, problem: str, readable: int | None) -> Damage:
        return Damage(source.cluster, file, position, problem, readable, promised)

    for snapshot in manifest.snapshots:
        location = _sibling(source, snapshot.file)
        size = _size(location)
        if size is None or size != snapshot.bytes:
            problem = (
                "missing"
                if size is None
                else f"{size} of the {snapshot.bytes} bytes the manifest promises"
            )
            position = 0 if size is None else min(size, snapshot.bytes)
            found = damage(location, position, problem, None)
            return source, dataclasses.replace(found, readable_end=promised, in_log=False)
    kept: list[str] = []
    readable: int | None = None
    for entry in manifest.segments:
        location = _sibling(source, entry.file)
        size = _size(location)
        if size is None:
            found = damage(location, 0, "missing", readable)
            return _cut(source, kept, readable or entry.base_offset), found
        data = files.read_all(location)
        result = scan_batches(data)
        whole_end = result.batches[-1].next_offset if result.batches else None
        if result.batches and result.batches[0].base_offset != entry.base_offset:
            problem = (
                f"starts at offset {result.batches[0].base_offset}, the manifest promises "
                f"{entry.base_offset}"
            )
            return _cut(source, kept, entry.base_offset), damage(location, 0, problem, readable)
        if whole_end is not None:
            readable = whole_end
        if not result.stop.clean:
            problem = result.stop.reason.value
            detail = result.stop.detail
            if len(data) != entry.bytes:
                problem = f"{len(data)} of the {entry.bytes} bytes the manifest promises, {problem}"
            elif detail:
                problem = f"{problem} ({detail})"
            kept.append(location)
            return (
                _cut(source, kept, readable or entry.base_offset),
                damage(location, result.stop.position, problem, readable),
            )
        if len(data) != entry.bytes or whole_end != entry.next_offset:
            problem = (
                f"{len(data)} bytes holding offsets up to {whole_end}; the manifest promises "
                f"{entry.bytes} bytes up to {entry.next_offset}"
            )
            kept.append(location)
            return (
                _cut(source, kept, min(readable or 0, entry.next_offset)),
                damage(location, min(len(data), entry.bytes), problem, readable),
            )
        kept.append(location)
    return source, None


def _check_by_headers(source: Source) -> tuple[Source, Damage | None]:
    kept: list[str] = []
    readable: int | None = None
    for location in source.segments:
        data = files.read_all(location)
        result = scan_batches(data)
        if result.batches and readable is not None:
            first = result.batches[0].base_offset
            if first > readable:
                problem = f"starts at offset {first}, offsets {readable}..{first - 1} are missing"
                return _cut(source, kept, readable), Damage(
                    source.cluster, location, 0, problem, readable, None
                )
        if result.batches:
            readable = max(readable or 0, result.batches[-1].next_offset)
        if not result.stop.clean:
            kept.append(location)
            stop = result.stop
            problem = stop.reason.value + (f" ({stop.detail})" if stop.detail else "")
            return _cut(source, kept, readable), Damage(
                source.cluster, location, stop.position, problem, readable, None
            )
        kept.append(location)
    return source, None


def _cut(source: Source, segments: Iterable[str], log_end: int | None) -> Source:
    return dataclasses.replace(source, segments=tuple(segments), log_end=log_end or 0)


def _size(location: str) -> int | None:
    if files.kind(location) != "file":
        return None
    return files.size(location)
