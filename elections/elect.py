"""Elections against a metadata image: ElectLeaders, broker lifecycle, and the periodic runs.

Every function reads the image and returns the PartitionChangeRecords to append; none changes
the image, reads a clock or does I/O, so the controller can call them on its latest image
(committed plus pending) from its event loop and tests can check them against plain models.

Records carry only what changes: ``leader`` when the leader moves (-2 otherwise), ``isr`` and
``leader_recovery_state`` when they change. Replaying a record adds one to the partition epoch,
and one to the leader epoch when it names a leader, so these functions set no epochs.

Output order is deterministic (by topic id and partition, or by topic name for ElectLeaders
replies), never set-iteration order, which varies from process to process.

Which brokers may lead: those registered, not fenced and not in controlled shutdown in the
image given, adjusted for the broker whose transition is being written (see each function).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction

from elections.leader_choice import ElrSettings, choose_leader
from elections.messages import (
    EXCESSIVE_BATCH_MESSAGE,
    election_not_needed,
    no_leader_elected,
    no_such_partition,
    no_such_topic,
)
from elections.types import ElectionOutcome
from raftmeta.common.elections import (
    SUCCESS,
    ElectionType,
    PartitionResult,
    TopicPartition,
    TopicResults,
)
from raftmeta.common.features import elr_enabled
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage, PartitionKey, PartitionRegistration
from raftmeta.records import NO_LEADER, ConfigResourceType, PartitionChangeRecord, TopicId

MAX_RECORDS_PER_BATCH = 10_000
"""Kafka's cap on records in one controller append, and on records one user operation writes."""

MAX_ELECTIONS_PER_RUN = 1_000
"""Kafka's cap on elections in one periodic rebalance or unclean-election run."""

UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable"
MIN_INSYNC_REPLICAS = "min.insync.replicas"


@dataclass(frozen=True, slots=True)
class PeriodicElections:
    """The records of one periodic run, and whether it stopped at its cap.

    A capped run left work undone: Kafka schedules the next run almost at once (10 ms) instead
    of after a full interval, and so should the controller.
    """

    records: tuple[PartitionChangeRecord, ...]
    capped: bool


def active_brokers(image: MetadataImage) -> Callable[[int], bool]:
    """Whether a broker may lead in ``image``: registered, not fenced, not shutting down."""

    def is_acceptable(broker_id: int) -> bool:
        registration = image.broker(broker_id)
        return registration is not None and registration.is_active

    return is_acceptable


def unclean_election_enabled(image: MetadataImage, topic: str, default: bool) -> bool:
    """The topic's effective ``unclean.leader.election.enable``.

    The topic's own config wins, then the dynamic cluster-wide default (a BROKER config with
    an empty name), then ``default``, the static server config. A value that is neither true
    nor false (in any case) is passed over, as if unset: config validation refuses such values,
    so one in the log predates validation and should not switch on data-losing elections.
    """
    for resource_type, resource_name in (
        (ConfigResourceType.TOPIC, topic),
        (ConfigResourceType.BROKER, ""),
    ):
        value = image.configs(resource_type, resource_name).get(UNCLEAN_LEADER_ELECTION_ENABLE)
        if value is not None:
            lowered = value.strip().lower()
            if lowered in ("true", "false"):
                return lowered == "true"
    return default


def effective_min_isr(image: MetadataImage, topic: str, default: int) -> int:
    """The topic's ``min.insync.replicas``: its own config, then the cluster-wide dynamic
    default, then ``default`` (the static server config). Per-broker overrides are not read:
    with ELR on Kafka ignores them too, since one partition's ELR must not depend on which
    broker's view is asked. A value that is not a positive integer is passed over, as if unset.
    """
    for resource_type, resource_name in (
        (ConfigResourceType.TOPIC, topic),
        (ConfigResourceType.BROKER, ""),
    ):
        value = image.configs(resource_type, resource_name).get(MIN_INSYNC_REPLICAS)
        if value is not None:
            try:
                parsed = int(value.strip())
            except ValueError:
                continue
            if parsed >= 1:
                return parsed
    return default


@dataclass(frozen=True, slots=True)
class ElrExposure:
    """How many partitions lean on the KIP-966 lists (the audit's two findings, live)."""

    led_from_elr: int
    """Led, with the ISR below min ISR and an ELR outside it: the state a clean election from
    the ELR leaves; one more loss and only the ELR keeps the partition clean."""
    unclean_only: int
    """No leader, no ISR, no ELR: only the last known leader or an UNCLEAN election is left."""


def elr_exposure(image: MetadataImage, min_isr_default: int = 1) -> ElrExposure:
    """Counts both, scanning partitions only when ELR is on (off, neither state can arise)."""
    if not elr_enabled(image.features):
        return ElrExposure(0, 0)
    led_from_elr = unclean_only = 0
    min_isr_by_topic: dict[TopicId, int] = {}
    for (topic_id, _partition_id), partition in image.partitions():
        if partition.leader == NO_LEADER:
            if not partition.isr and not partition.elr:
                unclean_only += 1
            continue
        if not partition.elr:
            continue
        min_isr = min_isr_by_topic.get(topic_id)
        if min_isr is None:
            topic = image.topic(topic_id)
            min_isr = min_isr_by_topic[topic_id] = effective_min_isr(
                image, "" if topic is None else topic.name, min_isr_default
            )
        if len(partition.isr) < min_isr:
            led_from_elr += 1
    return ElrExposure(led_from_elr, unclean_only)


class _ElrLookup:
    """Per-topic :class:`ElrSettings` for one run, or ``None`` throughout when ELR is off."""

    def __init__(
        self,
        image: MetadataImage,
        min_isr_default: int,
        unclean_shutdown: frozenset[int] = frozenset(),
    ) -> None:
        self._image = image
        self._enabled = elr_enabled(image.features)
        self._default = min_isr_default
        self._unclean_shutdown = unclean_shutdown
        self._by_topic: dict[TopicId, ElrSettings] = {}

    def __call__(self, topic_id: TopicId) -> ElrSettings | None:
        if not self._enabled:
            return None
        settings = self._by_topic.get(topic_id)
        if settings is None:
            topic = self._image.topic(topic_id)
            name = "" if topic is None else topic.name
            settings = self._by_topic[topic_id] = ElrSettings(
                effective_min_isr(self._image, name, self._default), self._unclean_shutdown
            )
        return settings


# --- ElectLeaders -----------------------------------------------------------------------------


def elect_leaders(
    image: MetadataImage,
    election_type: ElectionType,
    partitions: Iterable[TopicPartition] | None,
    *,
    max_records: int = MAX_RECORDS_PER_BATCH,
    reject_oversized: bool = False,
    min_isr_default: int = 1,
) -> ElectionOutcome:
    """Answers an ElectLeaders request against ``image``.

    ``partitions`` ``None`` means every partition of every topic. Then only partitions where
    an election happened or failed are reported (ELECTION_NOT_NEEDED is dropped), but every
    topic appears, perhaps with no partitions; topics come by name, partitions by id.

    Listed partitions are all reported, ELECTION_NOT_NEEDED included, grouped by topic in the
    order each topic first appears and in request order within it. A partition listed twice is
    decided once, reported each time with the same result, and gets one record; Kafka would
    write the same record twice and bump the leader epoch twice for nothing.

    An empty (not ``None``) list gives an empty outcome before anything is checked, as in
    Kafka. ``election_type`` is PREFERRED or UNCLEAN, already parsed from the request at the
    service's edge (:meth:`ElectionType.from_request`); ONLINE is the controller's own
    election, never requested, and raises ``ValueError``.

    More than ``max_records`` records: the outcome is still whole, and its
    :attr:`~ElectionOutcome.batches` cut the records into appends of at most ``max_records``.
    Kafka instead fails the whole request with POLICY_VIOLATION, which leaves an operator of a
    large cluster no way to rebalance everything after a restart but to list partitions in
    chunks by hand. Splitting is safe because each record is a self-contained change to its
    own partition: if the controller fails over between batches, the committed ones stand, the
    client sees NOT_CONTROLLER and retries, and partitions already moved then report
    ELECTION_NOT_NEEDED (or drop out of an all-partitions reply). ``reject_oversized=True``
    restores Kafka's behaviour: :class:`KafkaError` POLICY_VIOLATION with Kafka's message.
    """
    requested: list[TopicPartition] | None = None
    if partitions is not None:
        requested = list(partitions)
        if not requested:
            return ElectionOutcome((), (), max_records)
    if election_type is ElectionType.ONLINE:
        raise ValueError("ElectLeaders elects PREFERRED or UNCLEAN leaders, not ONLINE ones")
    if max_records < 1:
        raise ValueError(f"max_records must be at least 1, got {max_records}")

    is_acceptable = active_brokers(image)
    elr = _ElrLookup(image, min_isr_default)
    records: list[PartitionChangeRecord] = []
    if requested is None:
        results = _elect_all(image, election_type, is_acceptable, records, elr)
    else:
        results = _elect_listed(image, election_type, requested, is_acceptable, records, elr)
    if reject_oversized and len(records) > max_records:
        raise KafkaError(ErrorCode.POLICY_VIOLATION, EXCESSIVE_BATCH_MESSAGE)
    return ElectionOutcome(results, tuple(records), max_records)


def _elect_listed(
    image: MetadataImage,
    election: ElectionType,
    requested: list[TopicPartition],
    is_acceptable: Callable[[int], bool],
    records: list[PartitionChangeRecord],
    elr: _ElrLookup,
) -> tuple[TopicResults, ...]:
    by_topic: dict[str, list[tuple[int, PartitionResult]]] = {}
    decided: dict[TopicPartition, PartitionResult] = {}
    for topic_partition in requested:
        result = decided.get(topic_partition)
        if result is None:
            result, record = _elect_named(image, election, topic_partition, is_acceptable, elr)
            decided[topic_partition] = result
            if record is not None:
                records.append(record)
        by_topic.setdefault(topic_partition.topic, []).append((topic_partition.partition, result))
    return tuple(TopicResults(topic, tuple(entries)) for topic, entries in by_topic.items())


def _elect_named(
    image: MetadataImage,
    election: ElectionType,
    topic_partition: TopicPartition,
    is_acceptable: Callable[[int], bool],
    elr: _ElrLookup,
) -> tuple[PartitionResult, PartitionChangeRecord | None]:
    topic_name, partition_id = topic_partition.topic, topic_partition.partition
    topic = image.topic_by_name(topic_name)
    if topic is None:
        return no_such_topic(topic_name), None
    registration = topic.partitions.get(partition_id)
    if registration is None:
        return no_such_partition(topic_name, partition_id), None
    return _elect_one(
        election, topic_name, topic.topic_id, partition_id, registration, is_acceptable, elr
    )


def _elect_all(
    image: MetadataImage,
    election: ElectionType,
    is_acceptable: Callable[[int], bool],
    records: list[PartitionChangeRecord],
    elr: _ElrLookup,
) -> tuple[TopicResults, ...]:
    # Only these partitions can need an election; walking the index instead of every partition
    # keeps an all-partitions request on a million-partition image proportional to the work.
    candidates = (
        image.partitions_not_led_by_preferred
        if election is ElectionType.PREFERRED
        else image.leaderless_partitions
    )
    candidates_by_topic: dict[TopicId, list[int]] = {}
    for topic_id, partition_id in candidates:
        candidates_by_topic.setdefault(topic_id, []).append(partition_id)

    results: list[TopicResults] = []
    for topic_name in sorted(image.topic_ids_by_name):
        topic_id = image.topic_ids_by_name[topic_name]
        entries: list[tuple[int, PartitionResult]] = []
        for partition_id in sorted(candidates_by_topic.get(topic_id, ())):
            registration = image.partition(topic_id, partition_id)
            if registration is None:  # pragma: no cover - the index only holds real partitions
                continue
            result, record = _elect_one(
                election, topic_name, topic_id, partition_id, registration, is_acceptable, elr
            )
            if result.error is ErrorCode.ELECTION_NOT_NEEDED:
                continue  # the indexes leave these out already; kept so the rule stands alone
            entries.append((partition_id, result))
            if record is not None:
                records.append(record)
        results.append(TopicResults(topic_name, tuple(entries)))
    return tuple(results)


def _elect_one(
    election: ElectionType,
    topic_name: str,
    topic_id: TopicId,
    partition_id: int,
    registration: PartitionRegistration,
    is_acceptable: Callable[[int], bool],
    elr: _ElrLookup,
) -> tuple[PartitionResult, PartitionChangeRecord | None]:
    """One existing partition under ElectLeaders: the preconditions, then the leader choice."""
    if election is ElectionType.PREFERRED and registration.leader == registration.preferred_leader:
        return election_not_needed(topic_name, partition_id), None
    if election is ElectionType.UNCLEAN and registration.leader != NO_LEADER:
        # An unclean election only ever fills a leaderless partition.
        return election_not_needed(topic_name, partition_id), None
    change = choose_leader(registration, election, is_acceptable, elr=elr(topic_id))
    if change is None or change.leader is None:
        # An ELR-only change (no new leader) is no election result; nothing is written.
        return no_leader_elected(topic_name, partition_id, election), None
    return SUCCESS, change.to_record(topic_id, partition_id)


# --- broker lifecycle -------------------------------------------------------------------------


def online_elections_for_broker_removal(
    image: MetadataImage,
    broker_id: int,
    *,
    unclean_default: bool = False,
    min_isr_default: int = 1,
    max_records: int | None = None,
) -> tuple[PartitionChangeRecord, ...]:
    """Takes ``broker_id`` out of every ISR and moves its leaderships elsewhere.

    For a broker being fenced, entering controlled shutdown, or unregistering: the controller
    appends these records before (fencing, unregistering) or after (controlled shutdown) the
    broker's own registration record, so ``broker_id`` is treated as unable to lead whatever
    the image says about it.

    Each partition whose ISR holds the broker loses it from the ISR; if it led, a new leader is
    chosen from the rest of the ISR (ONLINE), or from any live replica when the topic's
    effective ``unclean.leader.election.enable`` is true (UNCLEAN; ``unclean_default`` is the
    static server config). With eligible leader replicas off the ISR never becomes empty: a
    broker that was the last member stays in it, and the partition is left leaderless until
    that broker returns (see :func:`elections_for_unfenced_broker`) or an unclean election.
    With them on, the broker leaves the ISR even as its last member and joins the ELR when the
    ISR is below ``min.insync.replicas`` (``min_isr_default`` is the static server config).

    ``max_records`` stops after that many records: the first slice, in partition order, of a
    removal the controller writes over several events. Each record is a whole change to its
    own partition, and a partition it changes no longer needs one, so asking again against
    an image holding the slice gives the next slice; fewer than ``max_records`` means the
    removal is complete.
    """
    return _removal_elections(
        image,
        broker_id,
        unclean_default,
        min_isr_default,
        frozenset(),
        in_elr_too=False,
        max_records=max_records,
    )


def elections_for_unclean_shutdown(
    image: MetadataImage,
    broker_id: int,
    *,
    unclean_default: bool = False,
    min_isr_default: int = 1,
) -> tuple[PartitionChangeRecord, ...]:
    """A broker came back without proof that it shut down cleanly (KIP-966).

    Its log may have lost an unflushed tail, so it no longer holds what ISR or ELR membership
    claims: it leaves every ISR (with leaderships moved, as for fencing) and every ELR, and
    does not join an ELR on the way out. Nothing when ELR is off: the registration path then
    treats the old incarnation as fenced, as before.
    """
    if not elr_enabled(image.features):
        return ()
    return _removal_elections(
        image,
        broker_id,
        unclean_default,
        min_isr_default,
        frozenset((broker_id,)),
        in_elr_too=True,
    )


def _removal_elections(
    image: MetadataImage,
    broker_id: int,
    unclean_default: bool,
    min_isr_default: int,
    unclean_shutdown: frozenset[int],
    *,
    in_elr_too: bool,
    max_records: int | None = None,
) -> tuple[PartitionChangeRecord, ...]:
    is_active = active_brokers(image)

    def is_acceptable(candidate: int) -> bool:
        return candidate != broker_id and is_active(candidate)

    elr = _ElrLookup(image, min_isr_default, unclean_shutdown)
    keys = set(image.partitions_with_isr_member(broker_id))
    if in_elr_too:
        # The ELR has no index: a scan, run only when a broker returns from an unclean stop.
        keys.update(key for key, partition in image.partitions() if broker_id in partition.elr)
    unclean_by_topic: dict[TopicId, bool] = {}
    records: list[PartitionChangeRecord] = []
    for topic_id, partition_id in _ascending(keys, max_records):
        registration = image.partition(topic_id, partition_id)
        if registration is None:  # pragma: no cover - the index only holds real partitions
            continue
        election = _lifecycle_election(image, topic_id, unclean_by_topic, unclean_default)
        target_isr = tuple(member for member in registration.isr if member != broker_id)
        change = choose_leader(
            registration, election, is_acceptable, target_isr=target_isr, elr=elr(topic_id)
        )
        if change is not None:
            records.append(change.to_record(topic_id, partition_id))
            if len(records) == max_records:
                break
    return tuple(records)


def _ascending(keys: Collection[PartitionKey], first: int | None) -> Iterator[PartitionKey]:
    """``keys`` in order; with ``first``, the first that many found without sorting them all.

    A slice usually needs only its first ``first`` keys, and a broker in 60,000 ISRs would
    otherwise sort all 60,000 for every slice of 500. The rest are sorted only if the slice
    runs past them (keys where nothing changes, such as partitions the broker is alone in).
    """
    if first is None or first >= len(keys):
        yield from sorted(keys)
        return
    smallest = heapq.nsmallest(first, keys)
    yield from smallest
    yield from sorted(keys)[first:]


def elections_for_unfenced_broker(
    image: MetadataImage,
    broker_id: int,
    *,
    unclean_default: bool = False,
    min_isr_default: int = 1,
) -> tuple[PartitionChangeRecord, ...]:
    """Leaders for leaderless partitions now that ``broker_id`` is unfenced.

    Written right after the broker's unfencing record, possibly against an image that still
    shows it fenced, so ``broker_id`` counts as able to lead. This is what brings back a
    partition whose last ISR member was this broker. Every leaderless partition is tried, as
    in Kafka, with ONLINE or UNCLEAN per its topic's effective config.
    """
    is_active = active_brokers(image)

    def is_acceptable(candidate: int) -> bool:
        return candidate == broker_id or is_active(candidate)

    elr = _ElrLookup(image, min_isr_default)
    unclean_by_topic: dict[TopicId, bool] = {}
    records: list[PartitionChangeRecord] = []
    for topic_id, partition_id in sorted(image.leaderless_partitions):
        registration = image.partition(topic_id, partition_id)
        if registration is None:  # pragma: no cover - the index only holds real partitions
            continue
        election = _lifecycle_election(image, topic_id, unclean_by_topic, unclean_default)
        change = choose_leader(registration, election, is_acceptable, elr=elr(topic_id))
        if change is not None:
            records.append(change.to_record(topic_id, partition_id))
    return tuple(records)


def _lifecycle_election(
    image: MetadataImage,
    topic_id: TopicId,
    unclean_by_topic: dict[TopicId, bool],
    unclean_default: bool,
) -> ElectionType:
    unclean = unclean_by_topic.get(topic_id)
    if unclean is None:
        topic = image.topic(topic_id)
        name = "" if topic is None else topic.name
        unclean = unclean_by_topic[topic_id] = unclean_election_enabled(
            image, name, unclean_default
        )
    return ElectionType.UNCLEAN if unclean else ElectionType.ONLINE


# --- periodic runs ----------------------------------------------------------------------------


def unclean_elections_for_leaderless(
    image: MetadataImage,
    *,
    unclean_default: bool = False,
    max_elections: int = MAX_ELECTIONS_PER_RUN,
    min_isr_default: int = 1,
) -> PeriodicElections:
    """The periodic unclean election (every ``unclean.leader.election.interval.ms``).

    Gives leaderless partitions of topics whose effective ``unclean.leader.election.enable``
    is true a leader, clean if one is possible, else unclean. Turning the config on for a topic
    thus takes effect on the next run, not only at the next broker failure.
    """
    _check_cap(max_elections)
    is_acceptable = active_brokers(image)
    elr = _ElrLookup(image, min_isr_default)
    unclean_by_topic: dict[TopicId, bool] = {}
    records: list[PartitionChangeRecord] = []
    for topic_id, partition_id in sorted(image.leaderless_partitions):
        election = _lifecycle_election(image, topic_id, unclean_by_topic, unclean_default)
        if election is not ElectionType.UNCLEAN:
            continue
        registration = image.partition(topic_id, partition_id)
        if registration is None:  # pragma: no cover - the index only holds real partitions
            continue
        change = choose_leader(registration, election, is_acceptable, elr=elr(topic_id))
        if change is None or change.leader is None:
            continue
        if len(records) == max_elections:
            return PeriodicElections(tuple(records), capped=True)
        records.append(change.to_record(topic_id, partition_id))
    return PeriodicElections(tuple(records), capped=False)


def leader_imbalance(image: MetadataImage) -> dict[int, Fraction]:
    """Each broker's leader imbalance, the classic controller's formula.

    For a broker B, of the partitions whose preferred replica (first replica) is B, the share
    B does not lead. Brokers that are nobody's preferred replica are left out; an exact
    fraction lets callers compare against a percentage without rounding.
    """
    return {
        broker_id: Fraction(preferred - image.preferred_and_leading_count(broker_id), preferred)
        for broker_id, preferred in image.preferred_counts.items()
    }


def preferred_rebalance(
    image: MetadataImage,
    *,
    threshold_percent: int,
    max_elections: int = MAX_ELECTIONS_PER_RUN,
    eligible: Callable[[int, PartitionKey], bool] | None = None,
) -> PeriodicElections:
    """Automatic preferred-leader rebalance, honouring ``leader.imbalance.per.broker.percentage``.

    Kafka's KRaft controller ignores the percentage and moves every partition it can; the
    classic controller, and operators who tuned the setting to limit leadership churn, expect
    this: only brokers whose :func:`leader_imbalance` is strictly above ``threshold_percent``
    get leaderships back, and then all of theirs that can move. 0 therefore moves every
    movable partition, as KRaft does.

    A partition moves only to its preferred replica, and only if that replica is in the ISR,
    its broker can lead, and ``eligible(broker_id, (topic_id, partition_id))`` allows it. That
    last is the catch-up gate: a broker just back from a restart is in the ISR before it has
    warmed up, and handing it leadership at once spikes produce latency; the controller, which
    owns the clock, answers from when the replica rejoined (``leader.imbalance.catch.up.ms``).
    Partitions that cannot move now stay imbalanced for a later run. A partition whose
    preferred replica cannot lead is not given another leader: that is an online election's
    job, not a rebalance's.

    At most ``max_elections`` records; ``capped`` says whether movable partitions remain.
    """
    if not 0 <= threshold_percent <= 100:
        raise ValueError(f"threshold_percent must be within 0..100, got {threshold_percent}")
    _check_cap(max_elections)
    is_acceptable = active_brokers(image)
    over_threshold = {
        broker_id
        for broker_id, preferred in image.preferred_counts.items()
        if (preferred - image.preferred_and_leading_count(broker_id)) * 100
        > threshold_percent * preferred
    }
    if not over_threshold:
        return PeriodicElections((), capped=False)

    def could_move(key: PartitionKey) -> bool:
        registration = image.partition(*key)
        if registration is None:  # pragma: no cover - the index only holds real partitions
            return False
        preferred = registration.preferred_leader
        return (
            preferred in over_threshold
            and preferred in registration.isr
            and is_acceptable(preferred)
        )

    # In order, but without sorting every partition not led by its preferred replica for
    # each run: after a rack returns that is a tenth of the cluster, and a run takes 1,000.
    candidates = [key for key in image.partitions_not_led_by_preferred if could_move(key)]
    records: list[PartitionChangeRecord] = []
    for key in _ascending(candidates, max_elections + 1):
        registration = image.partition(*key)
        assert registration is not None
        preferred = registration.preferred_leader
        if eligible is not None and not eligible(preferred, key):
            continue
        if len(records) == max_elections:
            return PeriodicElections(tuple(records), capped=True)
        records.append(
            PartitionChangeRecord(partition_id=key[1], topic_id=key[0], leader=preferred)
        )
    return PeriodicElections(tuple(records), capped=False)


def _check_cap(max_elections: int) -> None:
    if max_elections < 1:
        raise ValueError(f"max_elections must be at least 1, got {max_elections}")
