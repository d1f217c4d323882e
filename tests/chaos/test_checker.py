"""The campaign's checker catches what it exists to catch: planted lost writes, echoes,
divergent logs and divergent images, and lets an unknown outcome go either way."""

from __future__ import annotations

from pathlib import Path

from raftmeta.admin.types import KafkaException
from raftmeta.devkit.chaos.checker import NodeFiles, compare_images, compare_logs, judge, tally
from raftmeta.devkit.chaos.history import Operation, Outcome
from raftmeta.devkit.chaos.workload import classify
from raftmeta.errors import ErrorCode
from raftmeta.image import MetadataImage
from raftmeta.raft.batch import make_batch
from raftmeta.records import TopicRecord, encode_each
from raftmeta.storage.data_dir import MetadataDir

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"


def op(topic: str, outcome: Outcome) -> Operation:
    return Operation(topic, 0, 0.0, 0.1, outcome, "" if outcome is Outcome.OK else "error")


def test_an_acknowledged_write_missing_from_the_image_is_lost() -> None:
    verdict = tally([op("a", Outcome.OK), op("b", Outcome.OK)], {"a"})
    assert verdict.lost == ["b"]
    assert verdict.acknowledged == 2
    assert any("lost" in line for line in verdict.violations)


def test_a_write_reported_failed_but_present_is_an_echo() -> None:
    verdict = tally(
        [op("a", Outcome.FAILED), op("b", Outcome.ECHO), op("c", Outcome.FAILED)], {"a", "b"}
    )
    assert [echo.split()[0] for echo in verdict.echoes] == ["a", "b"]
    assert verdict.violations


def test_unknown_outcomes_may_go_either_way_and_a_clean_history_passes() -> None:
    verdict = tally(
        [
            op("a", Outcome.OK),
            op("b", Outcome.UNKNOWN),
            op("c", Outcome.UNKNOWN),
            op("d", Outcome.FAILED),
        ],
        {"a", "b"},
    )
    assert verdict.violations == []
    assert (verdict.unknown_present, verdict.unknown_absent, verdict.failed) == (1, 1, 1)


def test_divergent_batches_at_one_offset_are_reported() -> None:
    image = MetadataImage()
    same = {0: (1, 2, "x"), 2: (1, 1, "y")}
    assert compare_logs([NodeFiles("n1", same, image), NodeFiles("n2", dict(same), image)]) == []
    other = {0: (1, 2, "x"), 2: (2, 1, "z"), 3: (2, 1, "w")}
    problems = compare_logs([NodeFiles("n1", same, image), NodeFiles("n2", other, image)])
    assert len(problems) == 1 and "offset 2" in problems[0]


def test_images_that_differ_at_equal_offsets_are_reported() -> None:
    def image_with(name: str) -> MetadataImage:
        return MetadataImage.from_records([TopicRecord(name=name, topic_id=b"\x01" * 16)], 5)

    left, right = image_with("a"), image_with("b")
    nodes = [NodeFiles("n1", {}, left), NodeFiles("n2", {}, left)]
    assert compare_images(nodes, {"broker 1": (5, left.digest()), "broker 2": None}) == []
    assert compare_images([NodeFiles("n1", {}, left), NodeFiles("n2", {}, right)], {})
    assert compare_images(nodes, {"broker 1": (5, right.digest())})
    # At another offset the broker is simply behind: nothing to compare.
    assert compare_images(nodes, {"broker 1": (4, right.digest())}) == []


def test_errors_are_classified_by_what_they_say_about_the_write() -> None:
    assert classify(KafkaException(ErrorCode.TOPIC_ALREADY_EXISTS))[0] is Outcome.ECHO
    assert classify(KafkaException(ErrorCode.NOT_CONTROLLER))[0] is Outcome.UNKNOWN
    assert classify(KafkaException(ErrorCode.REQUEST_TIMED_OUT))[0] is Outcome.UNKNOWN
    assert classify(KafkaException(ErrorCode.INVALID_REPLICATION_FACTOR))[0] is Outcome.FAILED
    assert classify(TimeoutError("deadline"))[0] is Outcome.UNKNOWN


def _controller_dir(root: Path, node_id: int, tail_topic: str) -> Path:
    """A controller's directory whose log holds topic "shared" at offset 0, then its own
    ``tail_topic`` at offset 1 (as after a stop that let each node append its own tail)."""
    path = root / f"node-{node_id}"
    MetadataDir.format(path, node_id, CLUSTER)
    with MetadataDir.open(path, node_id) as directory:
        directory.log.append(
            [
                make_batch(0, 1, encode_each([TopicRecord(name="shared", topic_id=b"\x01" * 16)])),
                make_batch(
                    1, node_id, encode_each([TopicRecord(name=tail_topic, topic_id=b"\x02" * 16)])
                ),
            ]
        )
        directory.log.flush()
    return path


def test_only_the_prefix_committed_when_the_voters_converged_must_agree(tmp_path: Path) -> None:
    controllers = {
        "controller 1": _controller_dir(tmp_path, 1, "tail-of-1"),
        "controller 2": _controller_dir(tmp_path, 2, "tail-of-2"),
    }
    above = judge([], controllers, {}, converged_at=1)
    assert above.violations == []
    whole = judge([], controllers, {}, converged_at=2)
    assert any("different batches at offset 1" in line for line in whole.violations)
    assert any("different images at offset 1" in line for line in whole.violations)
