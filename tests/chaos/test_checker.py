"""The campaign's checker catches what it exists to catch: planted lost writes, echoes,
divergent logs and divergent images, and lets an unknown outcome go either way."""

from __future__ import annotations

from raftmeta.admin.types import KafkaException
from raftmeta.cli.chaos.checker import NodeFiles, compare_images, compare_logs, tally
from raftmeta.cli.chaos.history import Operation, Outcome
from raftmeta.cli.chaos.workload import classify
from raftmeta.errors import ErrorCode
from raftmeta.image import MetadataImage
from raftmeta.records import TopicRecord


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
