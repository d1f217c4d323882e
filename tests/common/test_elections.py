"""The election type is parsed once, where a request enters: the wire's ints become the enum,
and anything else is the request's INVALID_REQUEST."""

from __future__ import annotations

import pytest

from raftmeta.common.elections import ElectionType
from raftmeta.errors import ErrorCode, KafkaError


@pytest.mark.parametrize("election_type", [2, -1, 7, ElectionType.ONLINE, True])
def test_an_unknown_election_type_is_an_invalid_request(election_type: int) -> None:
    with pytest.raises(KafkaError) as caught:
        ElectionType.from_request(election_type)
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    assert caught.value.message.startswith("Unknown election type ")


def test_wire_values_are_accepted_as_plain_ints() -> None:
    assert ElectionType.from_request(0) is ElectionType.PREFERRED
    assert ElectionType.from_request(1) is ElectionType.UNCLEAN
    assert ElectionType.from_request(ElectionType.UNCLEAN) is ElectionType.UNCLEAN
