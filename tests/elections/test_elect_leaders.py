"""ElectLeaders: the per-partition codes and messages, all-partitions filtering, duplicates,
unclean elections, the records and what they do when replayed, and the record limit."""

from __future__ import annotations

import pytest

from elections import EXCESSIVE_BATCH_MESSAGE, ElectionOutcome, elect_leaders, split_into_batches
from raftmeta.common.elections import ElectionType, PartitionResult, TopicPartition, TopicResults
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage
from raftmeta.records import NO_LEADER, LeaderRecoveryState, PartitionChangeRecord
from tests.elections.clusters import (
    ACTIVE,
    FENCED,
    SHUTDOWN,
    Part,
    cluster,
    partition,
    replayed,
    topic_id,
)

PREFERRED = ElectionType.PREFERRED
UNCLEAN = ElectionType.UNCLEAN
OK = PartitionResult(ErrorCode.NONE)


def not_needed(name: str) -> PartitionResult:
    return PartitionResult(
        ErrorCode.ELECTION_NOT_NEEDED, f"Leader election not needed for topic partition {name}"
    )


def failed(name: str, strategy: str) -> PartitionResult:
    code = (
        ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
        if strategy == "PREFERRED"
        else ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE
    )
    return PartitionResult(
        code, f"Failed to elect leader for partition {name} under strategy {strategy}"
    )


def tp(name: str, partition_id: int) -> TopicPartition:
    return TopicPartition(name, partition_id)


@pytest.fixture
def image() -> MetadataImage:
    """Broker 1 has just come back: "orders" partitions 0 and 2 are led elsewhere."""
    return cluster(
        {1: ACTIVE, 2: ACTIVE, 3: ACTIVE, 4: FENCED, 5: SHUTDOWN},
        {
            "orders": [
                Part((1, 2, 3), leader=2),  # preferred can lead again
                Part((2, 3, 1)),  # already led by preferred
                Part((1, 3), isr=(3,), leader=3),  # preferred not in ISR
                Part((4, 2), leader=2),  # preferred fenced
                Part((5, 1), leader=1),  # preferred shutting down
            ],
            "clicks": [
                Part((4, 5), isr=(4,), leader=NO_LEADER),  # offline, nobody live in it
                Part((4, 2, 3), isr=(4,), leader=NO_LEADER),  # offline, 2 and 3 live outside
                Part((3, 2)),
            ],
        },
    )


# --- PREFERRED --------------------------------------------------------------------------------


def test_preferred_codes_per_partition(image: MetadataImage) -> None:
    outcome = elect_leaders(image, PREFERRED, [tp("orders", p) for p in range(5)])
    assert outcome.results == (
        TopicResults(
            "orders",
            (
                (0, OK),
                (1, not_needed("orders-1")),
                (2, failed("orders-2", "PREFERRED")),
                (3, failed("orders-3", "PREFERRED")),
                (4, failed("orders-4", "PREFERRED")),
            ),
        ),
    )
    assert outcome.records == (PartitionChangeRecord(0, topic_id("orders"), leader=1),)


def test_preferred_on_a_leaderless_partition_may_elect_a_non_preferred_replica() -> None:
    image = cluster({1: FENCED, 2: ACTIVE, 3: ACTIVE}, {"t": [Part((1, 2, 3), leader=NO_LEADER)]})
    outcome = elect_leaders(image, PREFERRED, [tp("t", 0)])
    assert outcome.by_partition() == {tp("t", 0): OK}
    assert partition(replayed(image, outcome.records), "t", 0).leader == 2


def test_unknown_topic_and_partition_use_kafkas_messages(image: MetadataImage) -> None:
    outcome = elect_leaders(image, PREFERRED, [tp("nope", 0), tp("orders", 9), tp("orders", -1)])
    assert outcome.results == (
        TopicResults(
            "nope",
            ((0, PartitionResult(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as nope")),),
        ),
        TopicResults(
            "orders",
            (
                (
                    9,
                    PartitionResult(
                        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as orders-9"
                    ),
                ),
                (
                    -1,
                    PartitionResult(
                        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as orders--1"
                    ),
                ),
            ),
        ),
    )
    assert outcome.records == ()


def test_results_are_grouped_by_topic_in_order_of_first_mention(image: MetadataImage) -> None:
    outcome = elect_leaders(
        image, PREFERRED, [tp("orders", 2), tp("clicks", 2), tp("orders", 0), tp("clicks", 0)]
    )
    assert [(r.topic, [p for p, _ in r.partitions]) for r in outcome.results] == [
        ("orders", [2, 0]),
        ("clicks", [2, 0]),
    ]


def test_duplicates_are_reported_each_time_with_one_record(image: MetadataImage) -> None:
    outcome = elect_leaders(
        image,
        PREFERRED,
        [tp("orders", 0), tp("orders", 1), tp("orders", 0), tp("nope", 1), tp("nope", 1)],
    )
    assert outcome.results[0].partitions == (
        (0, OK),
        (1, not_needed("orders-1")),
        (0, OK),
    )
    assert outcome.results[1].partitions == ((1, outcome.results[1].partitions[0][1]),) * 2
    assert len(outcome.records) == 1
    after = replayed(image, outcome.records)
    assert (
        partition(after, "orders", 0).leader_epoch == partition(image, "orders", 0).leader_epoch + 1
    )


def test_preferred_all_partitions_reports_only_elections_that_happened_or_failed(
    image: MetadataImage,
) -> None:
    outcome = elect_leaders(image, PREFERRED, None)
    assert outcome.results == (
        TopicResults(
            "clicks",
            ((0, failed("clicks-0", "PREFERRED")), (1, failed("clicks-1", "PREFERRED"))),
        ),
        TopicResults(
            "orders",
            (
                (0, OK),
                (2, failed("orders-2", "PREFERRED")),
                (3, failed("orders-3", "PREFERRED")),
                (4, failed("orders-4", "PREFERRED")),
            ),
        ),
    )
    after = replayed(image, outcome.records)
    assert partition(after, "orders", 0).leader == 1
    assert outcome.records == (PartitionChangeRecord(0, topic_id("orders"), leader=1),)


def test_every_topic_appears_in_an_all_partitions_reply_even_with_nothing_to_report() -> None:
    image = cluster({1: ACTIVE, 2: ACTIVE}, {"b": [Part((1, 2))], "a": [Part((2, 1))], "c": []})
    outcome = elect_leaders(image, UNCLEAN, None)
    assert outcome.results == (TopicResults("a", ()), TopicResults("b", ()), TopicResults("c", ()))
    assert outcome.records == ()


def test_all_partitions_of_an_empty_cluster_is_an_empty_reply() -> None:
    assert elect_leaders(cluster({}, {}), PREFERRED, None) == ElectionOutcome((), ())


# --- UNCLEAN ----------------------------------------------------------------------------------


def test_unclean_codes_per_partition(image: MetadataImage) -> None:
    outcome = elect_leaders(image, UNCLEAN, [tp("clicks", 0), tp("clicks", 1), tp("clicks", 2)])
    assert outcome.results == (
        TopicResults(
            "clicks",
            (
                (0, failed("clicks-0", "UNCLEAN")),
                (1, OK),
                (2, not_needed("clicks-2")),
            ),
        ),
    )
    (record,) = outcome.records
    assert record == PartitionChangeRecord(
        1, topic_id("clicks"), isr=(2,), leader=2, leader_recovery_state=1
    )


def test_unclean_election_is_not_needed_for_a_partition_with_any_leader(
    image: MetadataImage,
) -> None:
    # orders-3 is led by a non-preferred replica: still "not needed" for UNCLEAN.
    outcome = elect_leaders(image, UNCLEAN, [tp("orders", 3)])
    assert outcome.by_partition() == {tp("orders", 3): not_needed("orders-3")}


def test_an_unclean_pick_replays_to_isr_of_the_leader_alone_and_recovering(
    image: MetadataImage,
) -> None:
    before = partition(image, "clicks", 1)
    after = partition(replayed(image, elect_leaders(image, UNCLEAN, None).records), "clicks", 1)
    assert (after.leader, after.isr) == (2, (2,))
    assert after.leader_recovery_state == LeaderRecoveryState.RECOVERING
    assert after.leader_epoch == before.leader_epoch + 1
    assert after.partition_epoch == before.partition_epoch + 1
    assert after.replicas == before.replicas


def test_unclean_uses_a_clean_leader_when_the_isr_has_one() -> None:
    image = cluster(
        {1: FENCED, 2: ACTIVE, 3: ACTIVE}, {"t": [Part((1, 2, 3), isr=(3, 1), leader=NO_LEADER)]}
    )
    outcome = elect_leaders(image, UNCLEAN, [tp("t", 0)])
    assert outcome.records == (PartitionChangeRecord(0, topic_id("t"), leader=3),)


def test_unclean_all_partitions(image: MetadataImage) -> None:
    outcome = elect_leaders(image, UNCLEAN, None)
    assert outcome.results == (
        TopicResults("clicks", ((0, failed("clicks-0", "UNCLEAN")), (1, OK))),
        TopicResults("orders", ()),
    )


# --- records and epochs -----------------------------------------------------------------------


def test_a_preferred_election_replays_to_one_leader_epoch_and_one_partition_epoch(
    image: MetadataImage,
) -> None:
    outcome = elect_leaders(image, PREFERRED, [tp("orders", 0)])
    assert outcome.records == (PartitionChangeRecord(0, topic_id("orders"), leader=1),)
    before, after = (
        partition(image, "orders", 0),
        partition(replayed(image, outcome.records), "orders", 0),
    )
    assert after.leader == 1
    assert after.isr == before.isr
    assert after.leader_epoch == before.leader_epoch + 1
    assert after.partition_epoch == before.partition_epoch + 1
    assert after.leader_recovery_state == before.leader_recovery_state


def test_the_image_is_not_changed_by_an_election(image: MetadataImage) -> None:
    digest = image.digest()
    elect_leaders(image, PREFERRED, None)
    elect_leaders(image, UNCLEAN, None)
    assert image.digest() == digest


# --- request-level errors and limits ----------------------------------------------------------


def test_wire_values_parsed_at_the_edge_elect_as_the_enum_does(image: MetadataImage) -> None:
    from_wire = ElectionType.from_request
    assert elect_leaders(image, from_wire(0), None) == elect_leaders(image, PREFERRED, None)
    assert elect_leaders(image, from_wire(1), None) == elect_leaders(image, UNCLEAN, None)


def test_online_is_never_requested(image: MetadataImage) -> None:
    with pytest.raises(ValueError, match="not ONLINE"):
        elect_leaders(image, ElectionType.ONLINE, None)


def test_an_empty_list_is_answered_at_once_even_with_a_bad_type(image: MetadataImage) -> None:
    assert elect_leaders(image, ElectionType.ONLINE, []) == ElectionOutcome((), ())
    assert elect_leaders(image, PREFERRED, iter(())) == ElectionOutcome((), ())


def many_imbalanced_partitions(count: int) -> MetadataImage:
    return cluster({1: ACTIVE, 2: ACTIVE}, {"big": [Part((1, 2), leader=2)] * count})


def test_more_records_than_one_batch_holds_are_split_into_batches() -> None:
    image = many_imbalanced_partitions(25)
    outcome = elect_leaders(image, PREFERRED, None, max_records=10)
    assert len(outcome.records) == 25
    assert [len(batch) for batch in outcome.batches] == [10, 10, 5]
    assert tuple(record for batch in outcome.batches for record in batch) == outcome.records
    assert all(result == OK for _, result in outcome.items())


def test_kafkas_limit_rejects_an_oversized_request_with_policy_violation() -> None:
    image = many_imbalanced_partitions(11)
    with pytest.raises(KafkaError) as caught:
        elect_leaders(image, PREFERRED, None, max_records=10, reject_oversized=True)
    assert caught.value.code is ErrorCode.POLICY_VIOLATION
    assert (
        caught.value.message
        == EXCESSIVE_BATCH_MESSAGE
        == ("Unable to perform excessively large batch operation.")
    )
    exactly = elect_leaders(
        many_imbalanced_partitions(10), PREFERRED, None, max_records=10, reject_oversized=True
    )
    assert len(exactly.records) == 10


def test_the_default_limit_is_kafkas_ten_thousand() -> None:
    image = many_imbalanced_partitions(10_001)
    outcome = elect_leaders(image, PREFERRED, None)
    assert [len(batch) for batch in outcome.batches] == [10_000, 1]
    with pytest.raises(KafkaError):
        elect_leaders(image, PREFERRED, None, reject_oversized=True)


def test_batch_sizes_must_be_positive(image: MetadataImage) -> None:
    with pytest.raises(ValueError):
        elect_leaders(image, PREFERRED, None, max_records=0)
    with pytest.raises(ValueError):
        split_into_batches((), 0)
    with pytest.raises(ValueError):
        ElectionOutcome((), (), batch_size=0)
    assert ElectionOutcome((), ()).batches == ()
