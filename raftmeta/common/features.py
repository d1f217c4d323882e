"""Feature names and levels: what a cluster has finalized and what this build supports.

A finalized level lives in the log as a ``FeatureLevelRecord``; the image keeps the latest per
name (level 0 means not finalized). Brokers and controllers state the range they support when
they register, and an upgrade is refused while a registered, unfenced broker does not support
the new level, as in Kafka's ``FeatureControlManager``.

The ``metadata.version`` levels are Kafka's (``MetadataVersion``): 7 is 3.3-IV3, the oldest a
KRaft cluster runs, 23 is 4.0-IV1, the first with eligible leader replicas, 27 is 4.1-IV1.
``eligible.leader.replicas.version`` 1 turns on KIP-966 and needs ``metadata.version`` 23.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from raftmeta.records import BrokerFeature

METADATA_VERSION = "metadata.version"
ELIGIBLE_LEADER_REPLICAS_VERSION = "eligible.leader.replicas.version"

ELR_MIN_METADATA_VERSION = 23
"""4.0-IV1: eligible.leader.replicas.version 1 depends on it."""

METADATA_VERSION_RELEASES: Mapping[int, str] = {
    7: "3.3-IV3",
    8: "3.4-IV0",
    11: "3.5-IV2",
    14: "3.6-IV2",
    19: "3.7-IV4",
    20: "3.8-IV0",
    21: "3.9-IV0",
    22: "4.0-IV0",
    23: "4.0-IV1",
    24: "4.0-IV2",
    25: "4.0-IV3",
    26: "4.1-IV0",
    27: "4.1-IV1",
}
"""The levels worth a name here; others print as the bare number."""

SUPPORTED_FEATURES: tuple[BrokerFeature, ...] = (
    BrokerFeature(METADATA_VERSION, 7, 27),
    BrokerFeature(ELIGIBLE_LEADER_REPLICAS_VERSION, 0, 1),
)
"""The ranges this build supports; brokers report them at registration."""

RELEASE_DEFAULTS: Mapping[str, Mapping[str, int]] = {
    "3.9": {METADATA_VERSION: 21, ELIGIBLE_LEADER_REPLICAS_VERSION: 0},
    "4.0": {METADATA_VERSION: 25, ELIGIBLE_LEADER_REPLICAS_VERSION: 0},
    "4.1": {METADATA_VERSION: 27, ELIGIBLE_LEADER_REPLICAS_VERSION: 1},
}
"""The levels ``format --release-version`` finalizes: Kafka turns ELR on for new 4.1 clusters."""

LATEST_RELEASE = "4.1"


@dataclass(frozen=True, slots=True)
class FeatureUpdate:
    """One row of UpdateFeatures: a target level and whether a lower one is allowed."""

    name: str
    level: int
    allow_downgrade: bool = False


UPGRADE = 1
SAFE_DOWNGRADE = 2
UNSAFE_DOWNGRADE = 3
"""Kafka's UpdateFeatures upgrade types."""


@dataclass(frozen=True, slots=True)
class RequestedFeatureUpdate:
    """One UpdateFeatures row as the wire carries it: ``upgrade_type`` not yet checked."""

    name: str
    level: int
    upgrade_type: int


@dataclass(frozen=True, slots=True)
class UpdateFeaturesRequest:
    updates: tuple[RequestedFeatureUpdate, ...]
    validate_only: bool = False
    timeout_ms: int = 0


def release_levels(release: str) -> Mapping[str, int]:
    """The default levels of ``release`` (``4.1`` or a metadata version name like ``4.1-IV1``)."""
    short = release.split("-", 1)[0]
    levels = RELEASE_DEFAULTS.get(short)
    if levels is None:
        known = ", ".join(sorted(RELEASE_DEFAULTS))
        raise ValueError(f"Unknown release version {release!r}; this build knows {known}")
    if "-" in release:
        named = {name: level for level, name in METADATA_VERSION_RELEASES.items()}
        if release not in named:
            raise ValueError(f"Unknown metadata version {release!r}")
        levels = {**levels, METADATA_VERSION: named[release]}
        if named[release] < ELR_MIN_METADATA_VERSION:
            levels[ELIGIBLE_LEADER_REPLICAS_VERSION] = 0
    return levels


def metadata_version_name(level: int) -> str:
    return METADATA_VERSION_RELEASES.get(level, str(level))


def elr_enabled(features: Mapping[str, int]) -> bool:
    """Whether KIP-966 is on: the ELR feature at 1 or more, on a metadata version that has it."""
    return (
        features.get(ELIGIBLE_LEADER_REPLICAS_VERSION, 0) >= 1
        and features.get(METADATA_VERSION, ELR_MIN_METADATA_VERSION) >= ELR_MIN_METADATA_VERSION
    )
