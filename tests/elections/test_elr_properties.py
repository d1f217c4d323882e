"""The leader choice with eligible leader replicas (KIP-966), on and off, against a reference
model written here from the rules as stated (reference §9.1 and Kafka's election order), not
from the code: it computes the partition after the election from sets, and the properties check
that the record the code writes, replayed through the image, gives exactly that partition.

Off (no ``ElrSettings``) the model is the pre-KIP-966 rules, and the code must agree on every
drawn state, ELR lists included (they are never touched).
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from elections import ElrSettings, choose_leader
from raftmeta.common.elections import ElectionType
from raftmeta.image import PartitionRegistration
from raftmeta.records import NO_LEADER, PartitionRecord

BROKERS = range(6)
TOPIC = bytes(16)
SETTINGS = settings(max_examples=600, deadline=None)


@dataclass(frozen=True)
class After:
    leader: int
    isr: tuple[int, ...]
    recovering: bool
    elr: frozenset[int]
    last_known: tuple[int, ...]
    leader_epoch: int
    partition_epoch: int


def model(
    p: PartitionRegistration,
    kind: ElectionType,
    live: frozenset[int],
    dropped: int | None,
    elr_on: bool,
    min_isr: int,
    unclean_stop: frozenset[int],
) -> After:
    """The partition after the election, from the rules alone."""
    isr_left = tuple(b for b in p.isr if b != dropped)
    if dropped is not None:
        live = live - {dropped}
    elr = frozenset(p.elr)
    if elr_on:
        elr = (
            frozenset()
            if len(isr_left) >= min_isr
            else (frozenset(p.isr) | elr) - frozenset(isr_left) - unclean_stop
        )

    def valid(b: int) -> bool:
        return b in live and (b in isr_left or (elr_on and not isr_left and b in elr))

    def last_known_leader() -> int | None:
        lk = p.last_known_elr
        if elr_on and not isr_left and not elr and len(lk) == 1 and lk[0] in live:
            return lk[0]
        return None

    leader, unclean = p.leader, False
    wants = p.leader not in isr_left or (
        kind is ElectionType.PREFERRED and bool(p.replicas) and p.leader != p.replicas[0]
    )
    if wants:
        if kind is ElectionType.PREFERRED:
            order = [p.replicas[0], p.leader, *p.replicas[1:]] if p.replicas else [p.leader]
        else:
            order = [p.leader, *p.replicas]
        clean = [b for b in order if b != NO_LEADER and valid(b)]
        if clean:
            leader = clean[0]
        elif last_known_leader() is not None:
            leader, unclean = last_known_leader(), True  # type: ignore[assignment]
        elif kind is ElectionType.UNCLEAN and any(b in live for b in p.replicas):
            leader, unclean = next(b for b in p.replicas if b in live), True
        else:
            leader = NO_LEADER

    isr = isr_left if (isr_left or elr_on) else tuple(p.isr)
    recovering = p.leader_recovery_state == 1
    if leader != p.leader:
        if leader in elr:
            isr, elr = (leader,), elr - {leader}
        if unclean:
            isr, elr, recovering = (leader,), frozenset(), True
    elif not wants:
        isr = isr_left if (isr_left or elr_on) else tuple(p.isr)

    last_known = tuple(p.last_known_elr)
    if elr_on:
        if isr == () and p.isr != () and p.leader != NO_LEADER and last_known != (p.leader,):
            last_known = (p.leader,)
        elif last_known and leader != NO_LEADER:
            last_known = ()
    changed = (
        leader != p.leader
        or isr != p.isr
        or recovering != (p.leader_recovery_state == 1)
        or elr != frozenset(p.elr)
        or last_known != tuple(p.last_known_elr)
    )
    return After(
        leader,
        isr,
        recovering,
        elr,
        last_known,
        p.leader_epoch + (leader != p.leader),
        p.partition_epoch + changed,
    )


def code(
    p: PartitionRegistration,
    kind: ElectionType,
    live: frozenset[int],
    dropped: int | None,
    elr_settings: ElrSettings | None,
) -> After:
    def acceptable(b: int) -> bool:
        return b in live and b != dropped

    target = None if dropped is None else tuple(b for b in p.isr if b != dropped)
    change = choose_leader(p, kind, acceptable, target_isr=target, elr=elr_settings)
    after = p if change is None else p.merge(change.to_record(TOPIC, 0))
    return After(
        after.leader,
        after.isr,
        after.leader_recovery_state == 1,
        frozenset(after.elr),
        after.last_known_elr,
        after.leader_epoch,
        after.partition_epoch,
    )


@st.composite
def partitions(draw: st.DrawFn, elr_on: bool) -> PartitionRegistration:
    replicas = tuple(draw(st.lists(st.sampled_from(BROKERS), min_size=1, max_size=4, unique=True)))
    isr = tuple(b for b in replicas if draw(st.booleans()))
    if not isr and not elr_on:
        isr = replicas[:1]  # pre-KIP-966 the ISR is never empty
    leader = draw(st.sampled_from((NO_LEADER, *isr))) if isr else NO_LEADER
    elr: tuple[int, ...] = ()
    last_known: tuple[int, ...] = ()
    if elr_on:
        elr = tuple(sorted(b for b in replicas if b not in isr and draw(st.booleans())))
        if not isr and draw(st.booleans()):
            last_known = (draw(st.sampled_from(replicas)),)
    return PartitionRegistration.from_record(
        PartitionRecord(
            0,
            TOPIC,
            replicas,
            isr,
            leader=leader,
            leader_recovery_state=draw(st.sampled_from((0, 1))),
            leader_epoch=3,
            partition_epoch=5,
            eligible_leader_replicas=elr,
            last_known_elr=last_known,
        )
    )


kinds = st.sampled_from(list(ElectionType))
lives = st.frozensets(st.sampled_from(BROKERS))
droppeds = st.none() | st.sampled_from(BROKERS)


@SETTINGS
@given(partitions(elr_on=True), kinds, lives, droppeds, st.integers(1, 3), st.booleans())
def test_with_elr_on_the_code_elects_as_the_model(
    p: PartitionRegistration,
    kind: ElectionType,
    live: frozenset[int],
    dropped: int | None,
    min_isr: int,
    dropped_uncleanly: bool,
) -> None:
    unclean_stop = (
        frozenset((dropped,)) if dropped is not None and dropped_uncleanly else frozenset()
    )
    expected = model(p, kind, live, dropped, True, min_isr, unclean_stop)
    assert code(p, kind, live, dropped, ElrSettings(min_isr, unclean_stop)) == expected


@SETTINGS
@given(partitions(elr_on=False), kinds, lives, droppeds)
def test_with_elr_off_the_code_elects_as_before_kip_966(
    p: PartitionRegistration, kind: ElectionType, live: frozenset[int], dropped: int | None
) -> None:
    expected = model(p, kind, live, dropped, False, 1, frozenset())
    assert code(p, kind, live, dropped, None) == expected


@SETTINGS
@given(partitions(elr_on=True), kinds, lives, st.integers(1, 3))
def test_an_elr_election_is_clean_and_a_last_known_leader_is_not(
    p: PartitionRegistration, kind: ElectionType, live: frozenset[int], min_isr: int
) -> None:
    change = choose_leader(p, kind, live.__contains__, elr=ElrSettings(min_isr))
    if change is None or change.leader is None or change.leader == NO_LEADER:
        return
    if change.leader in p.elr and not p.isr:
        assert change.from_elr and not change.unclean
        assert change.leader_recovery_state is None
    if p.last_known_elr == (change.leader,) and not p.isr and not p.elr:
        assert change.unclean and change.isr == (change.leader,)
