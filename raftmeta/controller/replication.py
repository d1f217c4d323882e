"""Topics, partitions and their leaders: Kafka's ``ReplicationControlManager``.

Everything that decides where replicas live and who leads them: CreateTopics, CreatePartitions
and DeleteTopics (records built by :mod:`raftmeta.controller.topics` with ``placement/``),
AlterPartition (checked by :mod:`raftmeta.controller.alter_partition`), ElectLeaders and the
two periodic elections, the preferred-leader rebalance and unclean elections for leaderless
partitions (``elections/``). Reassignments have a manager of their own beside this one
(:mod:`raftmeta.controller.reassignment`); the AlterPartition that brings a move's last target
replica into the ISR completes it here, in the same record.

Every method is a pure function of the image it is handed (the queue's latest image) and of
the arguments, returning :class:`ControllerResult`; the queue in
:mod:`raftmeta.controller.controller` stages, appends and answers. A method yielding one result
per item is run item by item by the queue, which applies each item's records to that same
image before asking for the next, so later items see earlier ones. No clock is read here: the
time a decision needs comes in as ``now_ms``.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence

from elections import elect_leaders, preferred_rebalance, unclean_elections_for_leaderless
from placement import ReplicaPlacer, StripedReplicaPlacer
from raftmeta.common.brokers import AlterPartitionRequest, AlterPartitionResult
from raftmeta.common.elections import ElectionType, TopicPartition, TopicResults
from raftmeta.common.items import DUPLICATE_TOPIC, OK, ItemError, duplicated
from raftmeta.common.topics import CreateTopicResult, NewPartitions, NewTopic, TopicResult
from raftmeta.controller.alter_partition import check_isr_change
from raftmeta.controller.brokers import BrokerSession
from raftmeta.controller.cluster import check_broker_epoch
from raftmeta.controller.reassignment import complete_on_isr_change
from raftmeta.controller.result import MAX_RECORDS_PER_USER_OP, ControllerResult
from raftmeta.controller.settings import ControllerSettings
from raftmeta.controller.topics import (
    check_partition_total,
    check_topic_name,
    create_partitions_records,
    create_topic_records,
    delete_topic_records,
)
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage, PartitionKey


def random_topic_id(random_bytes: Callable[[int], bytes] = os.urandom) -> bytes:
    """A new topic's id: the 16 bytes of a random (version 4) UUID, exactly as
    ``uuid.uuid4().bytes`` makes them from the same random bytes, without the UUID object in
    between (it cost more than the rest of naming a topic)."""
    raw = bytearray(random_bytes(16))
    raw[6] = raw[6] & 0x0F | 0x40  # the version, 4, in the high nibble
    raw[8] = raw[8] & 0x3F | 0x80  # the variant, RFC 4122, in the two high bits
    return bytes(raw)


class ReplicationControlManager:
    """Topic, partition and leadership policy of the active controller."""

    def __init__(
        self,
        settings: ControllerSettings,
        *,
        placer: ReplicaPlacer | None = None,
        new_topic_id: Callable[[], bytes] | None = None,
    ) -> None:
        self.settings = settings
        self._placer: ReplicaPlacer = placer if placer is not None else StripedReplicaPlacer()
        self._new_topic_id = new_topic_id or random_topic_id
        self.election_counts: Counter[tuple[str, str]] = Counter()
        """Elections written, by (election type, outcome code name): requested ones per
        partition result, periodic ones per record (the server's metrics read it)."""

    # --- topics and partitions --------------------------------------------------------

    def create_topics(
        self, image: MetadataImage, topics: Sequence[NewTopic], validate_only: bool
    ) -> Iterator[ControllerResult[CreateTopicResult]]:
        """One result per topic; each is staged before the next is placed, so topics created
        together see each other's replicas."""
        settings = self.settings
        check_partition_total(topics, settings.num_partitions, MAX_RECORDS_PER_USER_OP)
        twice = duplicated(topic.name for topic in topics)
        for topic in topics:
            if topic.name in twice:
                yield ControllerResult((), CreateTopicResult(topic.name, DUPLICATE_TOPIC))
                continue
            try:
                check_topic_name(topic.name)
                topic_id = self._new_topic_id()
                records, partitions, replication_factor = create_topic_records(
                    image,
                    topic,
                    topic_id,
                    self._placer,
                    default_partitions=settings.num_partitions,
                    default_replication_factor=settings.default_replication_factor,
                )
            except KafkaError as error:
                yield ControllerResult(
                    (), CreateTopicResult(topic.name, ItemError(error.code, error.message))
                )
                continue
            yield ControllerResult(
                () if validate_only else tuple(records),
                CreateTopicResult(
                    topic.name,
                    OK,
                    topic_id,
                    partitions,
                    replication_factor,
                    dict(topic.configs),
                ),
            )

    def create_partitions(
        self, image: MetadataImage, requests: Sequence[NewPartitions], validate_only: bool
    ) -> Iterator[ControllerResult[TopicResult]]:
        """One result per topic; the request's new partitions together stay under the cap on
        one user operation, validate-only ones counted too."""
        twice = duplicated(request.topic for request in requests)
        planned = 0
        """New partitions this request has placed so far, validate-only ones included."""
        for request in requests:
            if request.topic in twice:
                yield ControllerResult((), TopicResult(request.topic, DUPLICATE_TOPIC))
                continue
            try:
                records = create_partitions_records(
                    image,
                    request,
                    self._placer,
                    max_new_partitions=MAX_RECORDS_PER_USER_OP - planned,
                )
            except KafkaError as error:
                yield ControllerResult(
                    (), TopicResult(request.topic, ItemError(error.code, error.message))
                )
                continue
            planned += len(records)
            yield ControllerResult(
                () if validate_only else tuple(records), TopicResult(request.topic)
            )

    def delete_topics(
        self, image: MetadataImage, names: Sequence[str]
    ) -> Iterator[ControllerResult[TopicResult]]:
        """One result per name; a name given twice fails both times, as in Kafka."""
        twice = duplicated(names)
        for name in names:
            if name in twice:
                yield ControllerResult((), TopicResult(name, DUPLICATE_TOPIC))
                continue
            try:
                records = delete_topic_records(image, name)
            except KafkaError as error:
                yield ControllerResult((), TopicResult(name, ItemError(error.code, error.message)))
                continue
            yield ControllerResult(tuple(records), TopicResult(name))

    # --- ISR changes ------------------------------------------------------------------

    def alter_partition(
        self, image: MetadataImage, request: AlterPartitionRequest
    ) -> Iterator[ControllerResult[AlterPartitionResult]]:
        """One result per partition, reporting the state its record makes (the image's own
        :meth:`~raftmeta.image.PartitionRegistration.merge`); a partition named twice is
        checked the second time against the first change. A change that completes a move and
        so elects another leader than the sender is written and answered NEW_LEADER_ELECTED,
        as Kafka answers it."""
        check_broker_epoch(image, request.broker_id, request.broker_epoch)
        for change in request.partitions:
            error, record = check_isr_change(
                image,
                request.broker_id,
                request.topic_id,
                change,
                min_isr_default=self.settings.min_insync_replicas,
            )
            if not error.ok:
                yield ControllerResult((), AlterPartitionResult(change.partition_id, error))
                continue
            current = image.partition(request.topic_id, change.partition_id)
            assert current is not None
            if record is not None:
                record = complete_on_isr_change(
                    image,
                    request.topic_id,
                    current,
                    record,
                    min_isr_default=self.settings.min_insync_replicas,
                )
            state = current if record is None else current.merge(record)
            outcome = OK
            if state.leader != request.broker_id:
                outcome = ItemError(
                    ErrorCode.NEW_LEADER_ELECTED,
                    f"The reassignment of partition {change.partition_id} completed and "
                    f"elected broker {state.leader} to lead it.",
                )
            yield ControllerResult(
                () if record is None else (record,),
                AlterPartitionResult(
                    change.partition_id,
                    outcome,
                    state.leader,
                    state.leader_epoch,
                    state.isr,
                    state.partition_epoch,
                    state.leader_recovery_state,
                ),
            )

    # --- elections --------------------------------------------------------------------

    def elect_leaders(
        self,
        image: MetadataImage,
        election_type: ElectionType,
        partitions: Sequence[TopicPartition] | None,
    ) -> ControllerResult[tuple[TopicResults, ...]]:
        """ElectLeaders (KIP-460) over ``partitions`` (None: every partition). Not atomic:
        each record is a whole change to its own partition."""
        outcome = elect_leaders(
            image,
            election_type,
            None if partitions is None else list(partitions),
            min_isr_default=self.settings.min_insync_replicas,
        )
        type_name = election_type.name
        counts = self.election_counts
        for topic_results in outcome.results:
            for _partition, result in topic_results.partitions:
                counts[(type_name, result.error.name)] += 1
        return ControllerResult(outcome.records, outcome.results, atomic=False)

    def rebalance(
        self, image: MetadataImage, now_ms: int, sessions: Mapping[int, BrokerSession]
    ) -> ControllerResult[bool]:
        """Preferred leaders back, for brokers over the imbalance threshold; True if capped.

        A broker this controller unfenced less than ``leader_imbalance_catch_up_ms`` ago
        (``sessions``, the cluster manager's soft state) is not handed leadership back yet;
        one without a session, or unfenced before this controller, counts as caught up.
        """
        catch_up = self.settings.leader_imbalance_catch_up_ms

        def caught_up(broker_id: int, _key: PartitionKey) -> bool:
            session = sessions.get(broker_id)
            return (
                session is None
                or session.unfenced_at_ms is None
                or now_ms - session.unfenced_at_ms >= catch_up
            )

        run = preferred_rebalance(
            image,
            threshold_percent=self.settings.leader_imbalance_per_broker_percentage,
            eligible=caught_up,
        )
        self.election_counts[(ElectionType.PREFERRED.name, ErrorCode.NONE.name)] += len(run.records)
        return ControllerResult(run.records, run.capped, atomic=False)

    def unclean_elections(self, image: MetadataImage) -> ControllerResult[bool]:
        """Leaders for leaderless partitions of topics allowing it; True if capped."""
        run = unclean_elections_for_leaderless(
            image,
            unclean_default=self.settings.unclean_leader_election_enable,
            min_isr_default=self.settings.min_insync_replicas,
        )
        self.election_counts[(ElectionType.UNCLEAN.name, ErrorCode.NONE.name)] += len(run.records)
        return ControllerResult(run.records, run.capped, atomic=False)
