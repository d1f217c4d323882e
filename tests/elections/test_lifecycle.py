"""Elections on fencing, controlled shutdown, unregistration and unfencing, the topic's
unclean-election config, and the periodic unclean election."""

from __future__ import annotations

import pytest

from elections import (
    active_brokers,
    elections_for_unfenced_broker,
    online_elections_for_broker_removal,
    unclean_election_enabled,
    unclean_elections_for_leaderless,
)
from raftmeta.image import MetadataImage
from raftmeta.records import (
    NO_LEADER,
    BrokerRegistrationChangeRecord,
    LeaderRecoveryState,
    PartitionChangeRecord,
    Record,
    UnregisterBrokerRecord,
)
from tests.elections.clusters import (
    ACTIVE,
    FENCED,
    SHUTDOWN,
    UNCLEAN_KEY,
    Part,
    cluster,
    partition,
    replayed,
    topic_id,
)

T = topic_id("t")


def three_brokers(*parts: Part, **config: str) -> MetadataImage:
    topic_configs = {"t": {UNCLEAN_KEY: config["unclean"]}} if "unclean" in config else None
    return cluster(
        {1: ACTIVE, 2: ACTIVE, 3: ACTIVE}, {"t": list(parts)}, topic_configs=topic_configs
    )


# --- removal: fencing, controlled shutdown, unregistration ------------------------------------


def test_removal_shrinks_isrs_and_moves_leaderships_to_the_next_isr_member() -> None:
    image = three_brokers(
        Part((1, 2, 3)),  # led by 1: moves to 2
        Part((2, 1, 3)),  # led by 2: only the ISR shrinks
        Part((3, 2), isr=(3, 2)),  # 1 not a replica: untouched
        Part((2, 3, 1), isr=(1, 3), leader=1),  # led by 1: first valid in replica order is 3
    )
    assert online_elections_for_broker_removal(image, 1) == (
        PartitionChangeRecord(0, T, isr=(2, 3), leader=2),
        PartitionChangeRecord(1, T, isr=(2, 3)),
        PartitionChangeRecord(3, T, isr=(3,), leader=3),
    )


def test_removal_replays_to_epochs_bumped_only_where_the_leader_moved() -> None:
    image = three_brokers(Part((1, 2, 3)), Part((2, 1, 3)))
    after = replayed(image, online_elections_for_broker_removal(image, 1))
    moved, shrunk = partition(after, "t", 0), partition(after, "t", 1)
    assert (moved.leader, moved.isr, moved.leader_epoch, moved.partition_epoch) == (
        2,
        (2, 3),
        6,
        10,
    )
    assert (shrunk.leader, shrunk.isr, shrunk.leader_epoch, shrunk.partition_epoch) == (
        2,
        (2, 3),
        5,
        10,
    )
    assert after.partitions_with_isr_member(1) == set()


def test_the_last_isr_member_stays_in_the_isr_and_the_partition_goes_offline() -> None:
    image = three_brokers(Part((1, 2), isr=(1,)))
    records = online_elections_for_broker_removal(image, 1)
    assert records == (PartitionChangeRecord(0, T, leader=NO_LEADER),)
    after = partition(replayed(image, records), "t", 0)
    assert (after.leader, after.isr, after.leader_epoch) == (NO_LEADER, (1,), 6)


def test_a_leaderless_partition_whose_last_member_goes_again_gets_no_record() -> None:
    image = three_brokers(Part((1, 2), isr=(1,), leader=NO_LEADER))
    assert online_elections_for_broker_removal(image, 1) == ()


def test_a_topic_allowing_unclean_election_gets_a_live_replica_outside_the_isr() -> None:
    image = three_brokers(Part((1, 2), isr=(1,)), unclean="true")
    records = online_elections_for_broker_removal(image, 1)
    assert records == (PartitionChangeRecord(0, T, isr=(2,), leader=2, leader_recovery_state=1),)
    after = partition(replayed(image, records), "t", 0)
    assert after.isr == (2,)
    assert after.leader_recovery_state == LeaderRecoveryState.RECOVERING


def test_the_unclean_default_applies_when_the_topic_does_not_say() -> None:
    image = three_brokers(Part((1, 2), isr=(1,)))
    assert online_elections_for_broker_removal(image, 1, unclean_default=True)[0].leader == 2
    image = three_brokers(Part((1, 2), isr=(1,)), unclean="false")
    assert (
        online_elections_for_broker_removal(image, 1, unclean_default=True)[0].leader == NO_LEADER
    )


def test_the_removed_broker_cannot_lead_even_if_the_image_still_shows_it_active() -> None:
    image = three_brokers(Part((2, 1), isr=(2, 1)), unclean="true")
    (record,) = online_elections_for_broker_removal(image, 2)
    assert (record.leader, record.isr) == (1, (1,))


def test_removal_skips_brokers_that_are_fenced_or_shutting_down() -> None:
    image = cluster(
        {1: ACTIVE, 2: FENCED, 3: SHUTDOWN, 4: ACTIVE},
        {"t": [Part((1, 2, 3, 4), isr=(1, 2, 3, 4))]},
    )
    assert online_elections_for_broker_removal(image, 1) == (
        PartitionChangeRecord(0, T, isr=(2, 3, 4), leader=4),
    )


@pytest.mark.parametrize("transition", ["fence", "shutdown", "unregister"])
def test_every_removal_transition_replays_cleanly_with_its_broker_record(transition: str) -> None:
    image = three_brokers(Part((1, 2, 3)), Part((2, 1)), Part((1,)))
    epoch = image.brokers[1].broker_epoch
    by_transition: dict[str, Record] = {
        "fence": BrokerRegistrationChangeRecord(1, epoch, fenced=1),
        "shutdown": BrokerRegistrationChangeRecord(1, epoch, in_controlled_shutdown=1),
        "unregister": UnregisterBrokerRecord(1, epoch),
    }
    broker_record = by_transition[transition]
    records: list[Record] = [*online_elections_for_broker_removal(image, 1), broker_record]
    after = MetadataImage.from_records(image.to_records(), image.offset)
    after.apply_batch(records, image.offset + 1)
    assert [partition(after, "t", p).leader for p in range(3)] == [2, 2, NO_LEADER]
    assert not active_brokers(after)(1)


# --- unfencing --------------------------------------------------------------------------------


def test_unfencing_the_last_isr_member_brings_its_partitions_back() -> None:
    image = cluster(
        {1: FENCED, 2: ACTIVE},
        {"t": [Part((1, 2), isr=(1,), leader=NO_LEADER), Part((2, 1), isr=(1,), leader=NO_LEADER)]},
    )
    assert elections_for_unfenced_broker(image, 1) == (
        PartitionChangeRecord(0, T, leader=1),
        PartitionChangeRecord(1, T, leader=1),
    )


def test_unfencing_tries_every_leaderless_partition_with_its_topics_election() -> None:
    image = cluster(
        {1: FENCED, 2: ACTIVE, 3: FENCED},
        {
            "t": [Part((3, 2), isr=(3,), leader=NO_LEADER)],
            "u": [Part((3, 2), isr=(3,), leader=NO_LEADER), Part((2, 3), isr=(2, 3), leader=3)],
        },
        topic_configs={"u": {UNCLEAN_KEY: "TRUE"}},
    )
    # Broker 1 is not a replica anywhere; "u" still gets its unclean leader in this pass.
    assert elections_for_unfenced_broker(image, 1) == (
        PartitionChangeRecord(0, topic_id("u"), isr=(2,), leader=2, leader_recovery_state=1),
    )


def test_unfencing_leaves_led_partitions_alone() -> None:
    image = cluster({1: FENCED, 2: ACTIVE}, {"t": [Part((1, 2), leader=2)]})
    assert elections_for_unfenced_broker(image, 1) == ()


# --- the topic's effective config -------------------------------------------------------------


@pytest.mark.parametrize(
    ("topic_value", "cluster_value", "default", "expected"),
    [
        (None, None, False, False),
        (None, None, True, True),
        ("true", None, False, True),
        ("false", "true", True, False),
        (None, "true", False, True),
        (None, "False", True, False),
        (" True ", None, False, True),
        ("yes", None, False, False),
        ("yes", "true", False, True),
    ],
)
def test_topic_config_overrides_the_cluster_default_which_overrides_the_static_one(
    topic_value: str | None, cluster_value: str | None, default: bool, expected: bool
) -> None:
    image = cluster(
        {1: ACTIVE},
        {"t": [Part((1,))]},
        topic_configs={"t": {UNCLEAN_KEY: topic_value}} if topic_value is not None else None,
        cluster_configs={UNCLEAN_KEY: cluster_value} if cluster_value is not None else None,
    )
    assert unclean_election_enabled(image, "t", default) is expected


# --- periodic unclean election ----------------------------------------------------------------


def test_the_periodic_run_only_touches_topics_allowing_unclean_election() -> None:
    image = cluster(
        {1: FENCED, 2: ACTIVE},
        {
            "safe": [Part((1, 2), isr=(1,), leader=NO_LEADER)],
            "lossy": [Part((1, 2), isr=(1,), leader=NO_LEADER), Part((1,), leader=NO_LEADER)],
        },
        topic_configs={"lossy": {UNCLEAN_KEY: "true"}},
    )
    run = unclean_elections_for_leaderless(image)
    assert run.records == (
        PartitionChangeRecord(0, topic_id("lossy"), isr=(2,), leader=2, leader_recovery_state=1),
    )
    assert not run.capped
    assert len(unclean_elections_for_leaderless(image, unclean_default=True).records) == 2


def test_the_periodic_run_stops_at_its_cap_and_says_so() -> None:
    image = cluster({1: FENCED, 2: ACTIVE}, {"t": [Part((1, 2), isr=(1,), leader=NO_LEADER)] * 5})
    capped = unclean_elections_for_leaderless(image, unclean_default=True, max_elections=3)
    assert [record.partition_id for record in capped.records] == [0, 1, 2]
    assert capped.capped
    exact = unclean_elections_for_leaderless(image, unclean_default=True, max_elections=5)
    assert (len(exact.records), exact.capped) == (5, False)
    with pytest.raises(ValueError):
        unclean_elections_for_leaderless(image, max_elections=0)
