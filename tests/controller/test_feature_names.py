"""UpdateFeatures' names: an empty name, and a feature this controller does not know, are
refused at any level (0 included, though 0 writes nothing), and validate-only refuses exactly
what the update refuses; a finalized feature may still be set to 0."""

from __future__ import annotations

import pytest

from raftmeta.common.features import ELIGIBLE_LEADER_REPLICAS_VERSION, FeatureUpdate
from raftmeta.controller.features import FeatureControlManager, update_feature_records
from raftmeta.controller.settings import ControllerSettings
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage
from raftmeta.records import FeatureLevelRecord

NODE_ID = 1


@pytest.mark.parametrize(
    ("name", "level", "code"),
    [
        ("", 0, ErrorCode.INVALID_REQUEST),
        ("", 1, ErrorCode.INVALID_REQUEST),
        ("no.such.feature", 0, ErrorCode.INVALID_UPDATE_VERSION),
        ("no.such.feature", 1, ErrorCode.INVALID_UPDATE_VERSION),
    ],
)
@pytest.mark.parametrize("validate_only", [True, False])
def test_an_empty_or_unknown_feature_name_is_refused(
    name: str, level: int, code: ErrorCode, validate_only: bool
) -> None:
    manager = FeatureControlManager(ControllerSettings(node_id=NODE_ID, cluster_id="c"))
    with pytest.raises(KafkaError) as refused:
        manager.update_features(MetadataImage(), [FeatureUpdate(name, level)], validate_only)
    assert refused.value.code == code


def test_a_known_feature_or_one_already_finalized_may_be_set_to_zero() -> None:
    image = MetadataImage()
    assert (
        update_feature_records(
            image, [FeatureUpdate(ELIGIBLE_LEADER_REPLICAS_VERSION, 0)], controller_id=NODE_ID
        )
        == ()
    )
    image.apply_batch([FeatureLevelRecord("from.a.newer.build", 2)], image.offset + 1)
    assert update_feature_records(
        image, [FeatureUpdate("from.a.newer.build", 0, allow_downgrade=True)], controller_id=NODE_ID
    ) == (FeatureLevelRecord("from.a.newer.build", 0),)
