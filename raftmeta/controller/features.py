"""UpdateFeatures and the feature check at broker registration (Kafka's FeatureControlManager).

A level is finalized by a ``FeatureLevelRecord``. An update is refused, with Kafka's
INVALID_UPDATE_VERSION and its wording, when the controller itself does not support the level,
when a registered, unfenced broker does not (a fenced broker is not serving, and must support
the finalized levels to register again anyway), when it lowers a level without a downgrade
type, or when it breaks a dependency (ELR 1 needs metadata.version 4.0-IV1). An empty feature
name is INVALID_REQUEST, and a feature this controller does not know (and the cluster has not
finalized) is refused at any level, 0 included, though 0 would write nothing. Every update of
a request is checked before any is written, so a request changes all its features or none;
validate-only runs the same checks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from raftmeta.common.features import (
    ELIGIBLE_LEADER_REPLICAS_VERSION,
    ELR_MIN_METADATA_VERSION,
    METADATA_VERSION,
    SUPPORTED_FEATURES,
    FeatureUpdate,
)
from raftmeta.controller.result import ControllerResult
from raftmeta.controller.settings import ControllerSettings
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage
from raftmeta.records import BrokerFeature, FeatureLevelRecord

ALL_FAILED_PREFIX = "The update failed for all features since the following feature had an error: "
"""Kafka's top-level message when one feature of an UpdateFeatures request is refused."""


@dataclass(frozen=True, slots=True)
class SupportedRange:
    min_version: int
    max_version: int


def _range_of(features: Sequence[BrokerFeature], name: str) -> SupportedRange:
    """What a node that listed ``features`` supports of ``name``: only 0 when unlisted."""
    for feature in features:
        if feature.name == name:
            return SupportedRange(feature.min_supported_version, feature.max_supported_version)
    return SupportedRange(0, 0)


def _invalid(name: str, level: int, who: str, supported: SupportedRange) -> KafkaError:
    return KafkaError(
        ErrorCode.INVALID_UPDATE_VERSION,
        f"Invalid update version {level} for feature {name}. {who} only supports versions "
        f"{supported.min_version}-{supported.max_version}",
    )


def update_feature_records(
    image: MetadataImage,
    updates: Sequence[FeatureUpdate],
    *,
    controller_id: int,
    controller_features: Sequence[BrokerFeature] = SUPPORTED_FEATURES,
) -> tuple[FeatureLevelRecord, ...]:
    """The records of an UpdateFeatures request, or the KafkaError of its first bad update."""
    finalized = dict(image.features)
    target = dict(finalized)
    names = [update.name for update in updates]
    if len(set(names)) != len(names):
        raise KafkaError(ErrorCode.INVALID_REQUEST, "A feature is listed more than once.")
    known = {feature.name for feature in controller_features}
    for update in updates:
        if not update.name:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Feature name can not be empty.")
        if update.name not in known and update.name not in finalized:
            # Even level 0 (nothing to write) is refused: an unknown name is a mistake.
            raise KafkaError(
                ErrorCode.INVALID_UPDATE_VERSION,
                f"Invalid update version {update.level} for feature {update.name}. "
                f"Local controller {controller_id} does not support this feature.",
            )
        current = finalized.get(update.name, 0)
        if update.level < 0:
            raise KafkaError(
                ErrorCode.INVALID_UPDATE_VERSION,
                f"Invalid update version {update.level} for feature {update.name}.",
            )
        if update.level < current and not update.allow_downgrade:
            raise KafkaError(
                ErrorCode.INVALID_UPDATE_VERSION,
                f"Invalid update version {update.level} for feature {update.name}. Can't "
                f"downgrade the version of this feature without setting the upgrade type to "
                f"either safe or unsafe downgrade.",
            )
        if update.name == METADATA_VERSION and update.level == 0:
            raise KafkaError(
                ErrorCode.INVALID_UPDATE_VERSION,
                f"Invalid update version 0 for feature {METADATA_VERSION}. "
                "metadata.version cannot be removed.",
            )
        if update.level != 0:
            own = _range_of(controller_features, update.name)
            if not own.min_version <= update.level <= own.max_version:
                raise _invalid(update.name, update.level, f"Local controller {controller_id}", own)
            for broker_id, broker in sorted(image.brokers.items()):
                if broker.fenced:
                    continue
                supported = _range_of(broker.features, update.name)
                if not supported.min_version <= update.level <= supported.max_version:
                    raise _invalid(update.name, update.level, f"Broker {broker_id}", supported)
        target[update.name] = update.level
    _check_dependencies(target)
    return tuple(
        FeatureLevelRecord(update.name, update.level)
        for update in updates
        if finalized.get(update.name, 0) != update.level
    )


def _check_dependencies(levels: Mapping[str, int]) -> None:
    elr = levels.get(ELIGIBLE_LEADER_REPLICAS_VERSION, 0)
    metadata_version = levels.get(METADATA_VERSION)
    if elr >= 1 and metadata_version is not None and metadata_version < ELR_MIN_METADATA_VERSION:
        raise KafkaError(
            ErrorCode.INVALID_UPDATE_VERSION,
            f"Invalid update version {elr} for feature {ELIGIBLE_LEADER_REPLICAS_VERSION}. "
            f"{ELIGIBLE_LEADER_REPLICAS_VERSION} {elr} depends on {METADATA_VERSION} "
            f"{ELR_MIN_METADATA_VERSION} or above, and {METADATA_VERSION} is {metadata_version}.",
        )


def check_broker_features(
    image: MetadataImage, broker_id: int, features: Sequence[BrokerFeature]
) -> None:
    """UNSUPPORTED_VERSION unless a registering broker supports every finalized level."""
    for name, level in sorted(image.features.items()):
        supported = _range_of(features, name)
        if not supported.min_version <= level <= supported.max_version:
            raise KafkaError(
                ErrorCode.UNSUPPORTED_VERSION,
                f"Unable to register because the broker does not support finalized version "
                f"{level} of {name}. The broker wants a version between "
                f"{supported.min_version} and {supported.max_version}, inclusive.",
            )


def supported_ranges(
    image: MetadataImage, controller_features: Sequence[BrokerFeature] = SUPPORTED_FEATURES
) -> dict[str, SupportedRange]:
    """Per feature this controller knows, the range every unfenced broker and it support."""
    ranges: dict[str, SupportedRange] = {}
    for feature in controller_features:
        low, high = feature.min_supported_version, feature.max_supported_version
        for broker in image.brokers.values():
            if broker.fenced:
                continue
            supported = _range_of(broker.features, feature.name)
            low, high = max(low, supported.min_version), min(high, supported.max_version)
        ranges[feature.name] = SupportedRange(low, high)
    return ranges


class FeatureControlManager:
    """UpdateFeatures, DescribeFeatures and the bootstrap levels: Kafka's
    ``FeatureControlManager``. The check a registering broker's features pass is
    :func:`check_broker_features`, which the cluster manager calls."""

    def __init__(self, settings: ControllerSettings) -> None:
        self.settings = settings

    def update_features(
        self, image: MetadataImage, updates: Sequence[FeatureUpdate], validate_only: bool
    ) -> ControllerResult[None]:
        """Every update or none; a refused one fails the whole request with its error under
        Kafka's top-level prefix."""
        try:
            records = update_feature_records(image, updates, controller_id=self.settings.node_id)
        except KafkaError as error:
            raise KafkaError(error.code, ALL_FAILED_PREFIX + error.message) from None
        return ControllerResult(() if validate_only else records, None)

    def describe_features(
        self, image: MetadataImage
    ) -> ControllerResult[tuple[dict[str, int], dict[str, SupportedRange], int]]:
        """The finalized levels, the range every unfenced broker and this controller support,
        and the offset of the image they were read from (Kafka's finalized epoch)."""
        return ControllerResult((), (dict(image.features), supported_ranges(image), image.offset))

    def bootstrap_features(self, image: MetadataImage) -> ControllerResult[None]:
        """The bootstrap feature levels, as Kafka's first controller writes its
        ``bootstrap.checkpoint``: only into a log that finalized nothing yet."""
        if image.features or image.brokers or image.topics:
            return ControllerResult((), None)
        return ControllerResult(
            tuple(
                FeatureLevelRecord(name, level)
                for name, level in self.settings.bootstrap_features
                if level > 0
            ),
            None,
        )
