"""``replica.placer.class.name``: every way it can be wrong gets one clear line."""

from __future__ import annotations

from pathlib import Path

import pytest

from placement import (
    DEFAULT_PLACER_CLASS,
    CordonedBrokerPlacer,
    PlacementSpec,
    PlacerConfigError,
    PlacerLoadError,
    StripedReplicaPlacer,
    close_placer,
    load_placer,
)
from tests.placement import sample_placers
from tests.placement.clusters import grid, view

SAMPLES = "tests.placement.sample_placers"
KEY = "replica.placer.class.name"


def load_error(path: str) -> str:
    with pytest.raises(PlacerLoadError) as caught:
        load_placer(path, {})
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_default_path_loads_the_default_placer() -> None:
    assert DEFAULT_PLACER_CLASS == "placement.striped.StripedReplicaPlacer"
    assert isinstance(load_placer(DEFAULT_PLACER_CLASS, {}), StripedReplicaPlacer)


@pytest.mark.parametrize(
    "path",
    [
        f"{SAMPLES}.FirstBrokersPlacer",
        f"{SAMPLES}:FirstBrokersPlacer",
        f"  {SAMPLES}:FirstBrokersPlacer ",
    ],
)
def test_both_spellings_load_and_configure(path: str) -> None:
    config = {"replica.placer.anything": "1"}
    placer = load_placer(path, config)
    assert isinstance(placer, sample_placers.FirstBrokersPlacer)
    assert placer.config == config
    assert placer.place(PlacementSpec(0, 1, 2), view(grid(1, 3))) == [[0, 1]]
    close_placer(placer)
    assert placer.closed


def test_nested_class_and_minimal_placer() -> None:
    for path in (f"{SAMPLES}.Outer.NestedPlacer", f"{SAMPLES}:Outer.NestedPlacer"):
        placer = load_placer(path, {})
        assert isinstance(placer, sample_placers.Outer.NestedPlacer)
        close_placer(placer)  # nothing to close, and that is fine


def test_seed_from_config_makes_loaded_placers_reproducible() -> None:
    config = {"replica.placer.random.seed": "42"}
    spec = PlacementSpec(0, 30, 3)
    cluster = view(grid(3, 4))
    first = load_placer(DEFAULT_PLACER_CLASS, config).place(spec, cluster)
    second = load_placer(DEFAULT_PLACER_CLASS, config).place(spec, cluster)
    assert first == second


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("", f"{KEY} is empty; expected 'package.module.Class'"),
        ("StripedReplicaPlacer", f"{KEY}='StripedReplicaPlacer' is malformed"),
        ("placement..Striped", f"{KEY}='placement..Striped' is malformed"),
        ("a:b:c", f"{KEY}='a:b:c' is malformed"),
        (":Class", f"{KEY}=':Class' is malformed"),
        ("nosuchpackage.Placer", f"{KEY}='nosuchpackage.Placer': no module named 'nosuchpackage'"),
        (
            "placement.nosuchmodule.Placer",
            f"{KEY}='placement.nosuchmodule.Placer': no module named 'placement.nosuchmodule'",
        ),
        (
            "placement.striped.NoSuchPlacer",
            f"{KEY}='placement.striped.NoSuchPlacer': 'placement.striped' has no attribute "
            "'NoSuchPlacer'",
        ),
        (
            "placement.striped:NoSuchPlacer",
            f"{KEY}='placement.striped:NoSuchPlacer': 'placement.striped' has no attribute "
            "'NoSuchPlacer'",
        ),
        (f"{SAMPLES}.NotAPlacer", "NotAPlacer is not a replica placer: it has no place("),
        (f"{SAMPLES}.NeedsArguments", "NeedsArguments() failed: TypeError: "),
        (f"{SAMPLES}.WrongArity", "WrongArity.place must take two arguments (spec, cluster)"),
        (f"{SAMPLES}.factory_function", "names function 'factory_function', not a class"),
        (f"{SAMPLES}.instance", "names a MinimalPlacer object, not a class"),
        ("placement.striped", "names module 'placement.striped', not a class"),
        (
            f"{SAMPLES}.BrokenConfigure",
            "BrokenConfigure.configure failed: KeyError: 'replica.placer.sample.size'",
        ),
    ],
)
def test_load_errors(path: str, message: str) -> None:
    assert message in load_error(path)


def test_config_errors_keep_their_type_and_gain_the_placer() -> None:
    with pytest.raises(PlacerConfigError) as caught:
        load_placer(f"{SAMPLES}.BadConfig", {})
    assert str(caught.value) == (
        f"{KEY}='{SAMPLES}.BadConfig': replica.placer.sample.size='big' is not an integer"
    )


def test_errors_inside_the_module_are_reported_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "placer_needing_dependency.py").write_text("import no_such_dependency_xyz\n")
    (tmp_path / "placer_failing_import.py").write_text("raise RuntimeError('bad\\nsetup')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_error("placer_needing_dependency.Placer") == (
        f"{KEY}='placer_needing_dependency.Placer': importing 'placer_needing_dependency' "
        "failed: ModuleNotFoundError: No module named 'no_such_dependency_xyz'"
    )
    assert load_error("placer_failing_import:Placer") == (
        f"{KEY}='placer_failing_import:Placer': importing 'placer_failing_import' failed: "
        "RuntimeError: bad setup"
    )


def test_nested_loads_name_both_settings() -> None:
    config = {"replica.placer.cordon.delegate.class.name": "nosuch.Placer"}
    with pytest.raises(PlacerLoadError) as caught:
        load_placer("placement.cordon.CordonedBrokerPlacer", config)
    assert str(caught.value) == (
        f"{KEY}='placement.cordon.CordonedBrokerPlacer': "
        "replica.placer.cordon.delegate.class.name='nosuch.Placer': no module named 'nosuch'"
    )


def test_cordon_loads_with_its_delegate() -> None:
    placer = load_placer(
        "placement.cordon:CordonedBrokerPlacer",
        {
            "replica.placer.cordoned.brokers": "0",
            "replica.placer.cordon.delegate.class.name": f"{SAMPLES}.FirstBrokersPlacer",
        },
    )
    assert isinstance(placer, CordonedBrokerPlacer)
    assert placer.place(PlacementSpec(0, 1, 2), view(grid(1, 3))) == [[1, 2]]
