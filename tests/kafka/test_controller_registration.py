"""The active controller's handling of controller registrations (KIP-919): one record per new
registration, none for a repeat, refusals with a Kafka error and one line."""

from __future__ import annotations

import pytest

from raftmeta.controller import ControllerRegistrationRequest
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.records import BrokerEndpoint, RegisterControllerRecord
from tests.controller.harness import CLUSTER_ID, Harness, run_async

VOTERS = frozenset({3000, 3001, 3002})
KAFKA = (BrokerEndpoint("KAFKA", "127.0.0.1", 9192, 0),)


def request(
    controller_id: int, incarnation: int = 1, **changes: object
) -> ControllerRegistrationRequest:
    fields: dict[object, object] = {
        "controller_id": controller_id,
        "cluster_id": CLUSTER_ID,
        "incarnation_id": bytes([incarnation] * 16),
        "endpoints": KAFKA,
    }
    fields.update(changes)
    return ControllerRegistrationRequest(**fields)  # type: ignore[arg-type]


@run_async
async def test_a_registration_writes_one_record_and_a_restart_replaces_it() -> None:
    h = Harness(voter_ids=VOTERS)
    await h.start()
    await h.run(h.controller.register_controller(request(3001)))
    await h.run(h.controller.register_controller(request(3001)))  # a retry: nothing new
    assert h.log.replay_all().controllers[3001] == RegisterControllerRecord(
        3001, bytes([1] * 16), KAFKA
    )
    await h.run(h.controller.register_controller(request(3001, incarnation=2)))
    image = h.log.replay_all()
    assert image.controllers[3001].incarnation_id == bytes([2] * 16)
    written = [
        record
        for batch in h.log.batches
        if not batch.is_control
        for record in h.log.records(batch)
        if isinstance(record, RegisterControllerRecord)
    ]
    assert len(written) == 2
    await h.stop()


@run_async
async def test_a_dynamic_quorum_checks_registrations_against_its_voters_now() -> None:
    """A dynamic quorum has no ``controller.quorum.voters``: its voters are the Raft log's,
    and they change while the controller runs (a controller added later registers too)."""
    voters = {3000, 3001}
    h = Harness(live_voter_ids=lambda: voters)
    await h.start()
    await h.run(h.controller.register_controller(request(3001)))
    with pytest.raises(KafkaError) as refused:
        await h.run(h.controller.register_controller(request(3002)))
    assert refused.value.code is ErrorCode.INVALID_REGISTRATION
    voters.add(3002)
    await h.run(h.controller.register_controller(request(3002)))
    assert set(h.log.replay_all().controllers) == {3001, 3002}
    await h.stop()


@pytest.mark.parametrize(
    ("bad", "code", "says"),
    [
        (request(7), ErrorCode.INVALID_REGISTRATION, "not a voter"),
        (request(3000, cluster_id="other"), ErrorCode.INCONSISTENT_CLUSTER_ID, "other"),
        (request(3000, incarnation_id=b"short"), ErrorCode.INVALID_REGISTRATION, "16 bytes"),
        (
            request(3000, endpoints=(BrokerEndpoint("KAFKA", "h", 70_000, 0),)),
            ErrorCode.INVALID_REGISTRATION,
            "port 70000",
        ),
    ],
)
def test_a_bad_registration_is_refused_with_a_code_and_one_line(
    bad: ControllerRegistrationRequest, code: ErrorCode, says: str
) -> None:
    @run_async
    async def run() -> None:
        h = Harness(voter_ids=VOTERS)
        await h.start()
        with pytest.raises(KafkaError) as refused:
            await h.run(h.controller.register_controller(bad))
        assert refused.value.code is code and says in str(refused.value)
        assert "\n" not in str(refused.value)
        assert h.log.replay_all().controllers == {}
        await h.stop()

    run()
