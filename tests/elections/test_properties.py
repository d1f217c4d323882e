"""The election code against a plain reference model of Kafka's leader-choice rules.

The model below is written from the rules as stated (reference §2.4-2.6), not from the code:
it computes the whole partition *after* an election, epochs included, and says nothing about
records. The properties then check that the records the code writes, replayed through the
image, produce exactly that partition, on random partitions and random broker states.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from elections import (
    LeaderChange,
    choose_leader,
    elect_leaders,
    elections_for_unfenced_broker,
    online_elections_for_broker_removal,
    preferred_rebalance,
)
from raftmeta.common.elections import ElectionType, TopicPartition
from raftmeta.errors import ErrorCode
from raftmeta.image import MetadataImage, PartitionRegistration
from raftmeta.records import NO_LEADER, PartitionChangeRecord
from tests.elections.clusters import (
    ACTIVE,
    FENCED,
    SHUTDOWN,
    UNCLEAN_KEY,
    BrokerState,
    Part,
    cluster,
    replayed,
    topic_id,
)

BROKERS = range(7)
TOPICS = ("alpha", "beta", "gamma")
SETTINGS = settings(max_examples=250, deadline=None)


# --- the reference model ----------------------------------------------------------------------


@dataclass(frozen=True)
class Model:
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    recovering: bool
    leader_epoch: int
    partition_epoch: int


def model_of(registration: PartitionRegistration) -> Model:
    return Model(
        registration.replicas,
        registration.isr,
        registration.leader,
        registration.leader_recovery_state == 1,
        registration.leader_epoch,
        registration.partition_epoch,
    )


def model_election(p: Model, kind: str, live: frozenset[int], dropped: int | None = None) -> Model:
    """The partition after an election of ``kind`` ("preferred", "online" or "unclean") when
    ``live`` are the brokers that may lead and ``dropped`` is leaving every ISR."""
    isr_left = tuple(b for b in p.isr if b != dropped)
    live = live - {dropped} if dropped is not None else live

    def clean(b: int) -> bool:
        return b in isr_left and b in live

    preferred = p.replicas[0] if p.replicas else None
    searching = p.leader not in isr_left or (
        kind == "preferred" and preferred is not None and p.leader != preferred
    )
    leader, unclean = p.leader, False
    if searching:
        if kind == "preferred":
            in_order = [*p.replicas[:1], p.leader, *p.replicas[1:]]
        else:
            in_order = [p.leader, *p.replicas]
        clean_picks = [b for b in in_order if clean(b)]
        live_replicas = [b for b in p.replicas if b in live]
        if clean_picks:
            leader = clean_picks[0]
        elif kind == "unclean" and live_replicas:
            leader, unclean = live_replicas[0], True
        else:
            leader = NO_LEADER
    moved = leader != p.leader
    unclean = unclean and moved
    isr: tuple[int, ...]
    if unclean:
        isr = (leader,)
    elif isr_left:
        isr = isr_left
    else:  # an ISR is never emptied while eligible leader replicas are off
        isr = p.isr
    recovering = p.recovering or unclean
    changed = moved or isr != p.isr or recovering != p.recovering
    return Model(
        p.replicas,
        isr,
        leader,
        recovering,
        p.leader_epoch + (1 if moved else 0),
        p.partition_epoch + (1 if changed else 0),
    )


def apply_change(p: Model, change: LeaderChange | None) -> Model:
    """What replaying ``change`` does, per the record semantics (not the image code)."""
    if change is None:
        return p
    return Model(
        p.replicas,
        p.isr if change.isr is None else change.isr,
        p.leader if change.leader is None else change.leader,
        p.recovering if change.leader_recovery_state is None else change.leader_recovery_state == 1,
        p.leader_epoch + (0 if change.leader is None else 1),
        p.partition_epoch + 1,
    )


# --- strategies -------------------------------------------------------------------------------


@st.composite
def models(draw: st.DrawFn) -> Model:
    replicas = tuple(draw(st.lists(st.sampled_from(BROKERS), max_size=4, unique=True)))
    # Half the time mostly-full ISRs, as in a healthy cluster, so common cases come up often.
    if draw(st.booleans()):
        isr = tuple(b for b in replicas if draw(st.integers(0, 3)) > 0)
    else:
        isr = tuple(b for b in replicas if draw(st.booleans()))
    if draw(st.integers(0, 9)) == 0:  # now and then an ISR member outside the replicas
        isr += tuple(b for b in draw(st.sets(st.sampled_from(BROKERS), max_size=1)) if b not in isr)
    leader = draw(st.sampled_from((NO_LEADER, *isr, *replicas)))
    return Model(replicas, isr, leader, draw(st.booleans()), draw(st.integers(0, 5)), 7)


@st.composite
def broker_states(draw: st.DrawFn) -> dict[int, BrokerState]:
    """Each broker mostly active, else fenced, shutting down or not registered (left out)."""
    states = (ACTIVE, ACTIVE, ACTIVE, ACTIVE, FENCED, SHUTDOWN, None)
    drawn = {b: draw(st.sampled_from(states)) for b in BROKERS}
    return {b: state for b, state in drawn.items() if state is not None}


live_sets = st.one_of(
    st.frozensets(st.sampled_from(BROKERS)),
    st.frozensets(st.sampled_from(BROKERS), max_size=2).map(lambda down: frozenset(BROKERS) - down),
)


def live_brokers(brokers: dict[int, BrokerState]) -> frozenset[int]:
    return frozenset(b for b, state in brokers.items() if state is ACTIVE)


@dataclass
class DrawnCluster:
    """A cluster Hypothesis drew: broker states, an image, and unclean-election settings."""

    brokers: dict[int, BrokerState]
    image: MetadataImage
    topic_unclean: dict[str, str]
    cluster_unclean: str | None

    def unclean(self, topic: str, static_default: bool) -> bool:
        """The topic's effective unclean.leader.election.enable: topic, cluster, static."""
        value = self.topic_unclean.get(topic, self.cluster_unclean)
        return static_default if value is None else value == "true"

    def leaders(self) -> list[int]:
        return sorted({p.leader for p in models_in(self.image).values() if p.leader >= 0})


@st.composite
def clusters(draw: st.DrawFn) -> DrawnCluster:
    brokers = draw(broker_states())
    topics: dict[str, list[Part]] = {}
    for name in draw(st.lists(st.sampled_from(TOPICS), unique=True, max_size=3)):
        topics[name] = [
            Part(m.replicas, m.isr, m.leader, m.recovering, m.leader_epoch, m.partition_epoch)
            for m in draw(st.lists(models(), max_size=4))
        ]
    settings = st.sampled_from((None, "true", "false"))
    topic_unclean = {name: value for name in topics if (value := draw(settings)) is not None}
    cluster_unclean = draw(settings)
    image = cluster(
        brokers,
        topics,
        topic_configs={name: {UNCLEAN_KEY: value} for name, value in topic_unclean.items()},
        cluster_configs=None if cluster_unclean is None else {UNCLEAN_KEY: cluster_unclean},
    )
    return DrawnCluster(brokers, image, topic_unclean, cluster_unclean)


def models_in(image: MetadataImage) -> dict[tuple[str, int], Model]:
    return {
        (topic.name, partition_id): model_of(registration)
        for topic in image.topics.values()
        for partition_id, registration in topic.partitions.items()
    }


def assert_replay_gives(
    image: MetadataImage,
    records: Iterable[PartitionChangeRecord],
    expected: dict[tuple[str, int], Model],
) -> None:
    after = models_in(replayed(image, records))
    assert after == expected


# --- properties -------------------------------------------------------------------------------


@SETTINGS
@given(
    models(),
    st.sampled_from(("preferred", "online", "unclean")),
    live_sets,
    st.none() | st.sampled_from(BROKERS),
)
def test_choose_leader_matches_the_model(
    p: Model, kind: str, live: frozenset[int], dropped: int | None
) -> None:
    election = ElectionType[kind.upper()]
    target = None if dropped is None else tuple(b for b in p.isr if b != dropped)
    state = PartitionRegistration(
        p.replicas, p.isr, (), (), p.leader, int(p.recovering), p.leader_epoch, p.partition_epoch
    )
    change = choose_leader(
        state,
        election,
        lambda b: b in live and b != dropped,
        target_isr=target,
    )
    expected = model_election(p, kind, live, dropped)
    assert apply_change(p, change) == expected
    # Nothing is written that does not change: no record at all, no unchanged field.
    assert (change is None) == (expected == p)
    if change is not None:
        assert change.leader is None or change.leader != p.leader
        assert change.isr is None or change.isr != p.isr
        assert change.leader_recovery_state is None or not p.recovering
        assert change.unclean == (change.isr == (change.leader,) and change.leader not in p.isr)


def expected_result(
    c: DrawnCluster, kind: str, name: str, partition_id: int
) -> tuple[ErrorCode, str | None, Model | None]:
    """Code, message and the partition afterwards, per the ElectLeaders rules."""
    topic = c.image.topic_by_name(name)
    if topic is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {name}", None
    registration = topic.partitions.get(partition_id)
    if registration is None:
        message = f"No such partition as {name}-{partition_id}"
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, message, None
    p = model_of(registration)
    not_needed = (
        p.leader == (p.replicas[0] if p.replicas else NO_LEADER)
        if kind == "preferred"
        else p.leader != NO_LEADER
    )
    if not_needed:
        message = f"Leader election not needed for topic partition {name}-{partition_id}"
        return ErrorCode.ELECTION_NOT_NEEDED, message, p
    after = model_election(p, kind, live_brokers(c.brokers))
    if after == p:
        code = (
            ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
            if kind == "preferred"
            else ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE
        )
        message = (
            f"Failed to elect leader for partition {name}-{partition_id} "
            f"under strategy {kind.upper()}"
        )
        return code, message, p
    return ErrorCode.NONE, None, after


requests = st.lists(
    st.builds(TopicPartition, st.sampled_from((*TOPICS, "missing")), st.integers(-1, 4)),
    min_size=1,
    max_size=8,
)


@SETTINGS
@given(clusters(), st.sampled_from(("preferred", "unclean")), requests)
def test_elect_leaders_on_listed_partitions_matches_the_model(
    c: DrawnCluster, kind: str, requested: list[TopicPartition]
) -> None:
    requested += requested[: len(requested) // 3]  # some duplicates
    outcome = elect_leaders(c.image, ElectionType[kind.upper()], requested)

    expected_order: dict[str, list[tuple[int, ErrorCode, str | None]]] = {}
    after = models_in(c.image)
    for tp in requested:
        code, message, model = expected_result(c, kind, tp.topic, tp.partition)
        expected_order.setdefault(tp.topic, []).append((tp.partition, code, message))
        if model is not None:
            after[tp.topic, tp.partition] = model
    assert [
        (r.topic, [(p, res.error, res.message) for p, res in r.partitions]) for r in outcome.results
    ] == list(expected_order.items())
    elected = {tp for tp, res in outcome.items() if res.error is ErrorCode.NONE}
    assert len(outcome.records) == len(elected)
    assert_replay_gives(c.image, outcome.records, after)


@SETTINGS
@given(clusters(), st.sampled_from(("preferred", "unclean")))
def test_elect_leaders_on_all_partitions_matches_the_model(c: DrawnCluster, kind: str) -> None:
    outcome = elect_leaders(c.image, ElectionType[kind.upper()], None)
    expected_results = []
    after = models_in(c.image)
    for name in sorted(c.image.topic_ids_by_name):
        entries = []
        topic = c.image.topic_by_name(name)
        assert topic is not None
        for partition_id in sorted(topic.partitions):
            code, message, model = expected_result(c, kind, name, partition_id)
            assert model is not None
            if code is not ErrorCode.ELECTION_NOT_NEEDED:
                entries.append((partition_id, code, message))
                after[name, partition_id] = model
        expected_results.append((name, entries))
    assert [
        (r.topic, [(p, res.error, res.message) for p, res in r.partitions]) for r in outcome.results
    ] == expected_results
    assert_replay_gives(c.image, outcome.records, after)


@SETTINGS
@given(clusters(), st.booleans(), st.data())
def test_broker_removal_matches_the_model(
    c: DrawnCluster, default: bool, data: st.DataObject
) -> None:
    leaders = c.leaders()
    if data.draw(st.booleans()) and leaders:
        broker_id = data.draw(st.sampled_from(leaders), label="a leader")
    else:
        broker_id = data.draw(st.sampled_from(BROKERS), label="any broker")
    records = online_elections_for_broker_removal(c.image, broker_id, unclean_default=default)
    live = live_brokers(c.brokers)
    expected = models_in(c.image)
    for (name, partition_id), p in expected.items():
        if broker_id in p.isr:
            kind = "unclean" if c.unclean(name, default) else "online"
            expected[name, partition_id] = model_election(p, kind, live, dropped=broker_id)
    assert_replay_gives(c.image, records, expected)
    before = models_in(c.image)
    for key, p in expected.items():
        was = before[key]
        if broker_id in p.isr and (was.leader == NO_LEADER or was.leader in was.isr):
            # It stays only as the last member, with nobody left to lead.
            assert p.isr == (broker_id,) and p.leader == NO_LEADER
    for record in records:
        assert record.isr != ()
        assert record.leader in (-2, NO_LEADER) or record.leader in (record.isr or ())
        assert record.leader != broker_id


@SETTINGS
@given(clusters(), st.booleans(), st.data())
def test_unfenced_broker_elections_match_the_model(
    c: DrawnCluster, default: bool, data: st.DataObject
) -> None:
    fenced = sorted(b for b, state in c.brokers.items() if state is FENCED)
    if data.draw(st.booleans()) and fenced:
        broker_id = data.draw(st.sampled_from(fenced), label="a fenced broker")
    else:
        broker_id = data.draw(st.sampled_from(BROKERS), label="any broker")
    records = elections_for_unfenced_broker(c.image, broker_id, unclean_default=default)
    live = live_brokers(c.brokers) | {broker_id}
    expected = models_in(c.image)
    for (name, partition_id), p in expected.items():
        if p.leader == NO_LEADER:
            kind = "unclean" if c.unclean(name, default) else "online"
            expected[name, partition_id] = model_election(p, kind, live)
    assert_replay_gives(c.image, records, expected)


@SETTINGS
@given(clusters(), st.sampled_from((0, 20, 25, 50, 100)) | st.integers(0, 100), st.integers(1, 4))
def test_rebalance_matches_the_imbalance_formula(c: DrawnCluster, threshold: int, cap: int) -> None:
    preferred_of: dict[int, int] = {}
    not_led_by: dict[int, int] = {}
    models = models_in(c.image)
    for p in models.values():
        if p.replicas:
            first = p.replicas[0]
            preferred_of[first] = preferred_of.get(first, 0) + 1
            if p.leader != first:
                not_led_by[first] = not_led_by.get(first, 0) + 1
    over = {
        b
        for b, total in preferred_of.items()
        if Fraction(not_led_by.get(b, 0), total) > Fraction(threshold, 100)
    }
    live = live_brokers(c.brokers)
    movable = sorted(
        (topic_id(name), partition_id)
        for (name, partition_id), p in models.items()
        if p.replicas
        and p.leader != p.replicas[0]
        and p.replicas[0] in over
        and p.replicas[0] in p.isr
        and p.replicas[0] in live
    )
    run = preferred_rebalance(c.image, threshold_percent=threshold, max_elections=cap)
    assert [(r.topic_id, r.partition_id) for r in run.records] == movable[:cap]
    assert run.capped == (len(movable) > cap)
    for record in run.records:
        assert record.isr is None and record.leader_recovery_state == -1
        registration = c.image.partition(record.topic_id, record.partition_id)
        assert registration is not None and record.leader == registration.replicas[0]
