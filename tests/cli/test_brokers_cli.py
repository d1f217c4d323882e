"""``raftmeta brokers`` on a real quorum: the table, ``--json``, and one line when nothing
answers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from raftmeta.channel import ControllerChannel
from raftmeta.cli.main import main
from tests.admin.brokers import register_unfenced, set_fenced
from tests.admin.fake_nodes import refusing_endpoint
from tests.admin.test_admin_quorum import QUIET
from tests.support.controller_quorum import ControllerQuorum
from tests.support.scenario import run_scenario


def test_brokers_lists_id_rack_fenced_epoch_and_leaders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        servers = ",".join(cluster.addresses.values())
        async with ControllerChannel(servers) as lifecycle:
            epochs = await register_unfenced(lifecycle, [1, 2, 3])
            status = await asyncio.to_thread(
                main,
                [
                    "topics",
                    "--bootstrap-server",
                    servers,
                    "--create",
                    "--topic",
                    "t",
                    "--replica-assignment",
                    "1:2,1:3,2:3",
                ],
            )
            assert status == 0
            await set_fenced(lifecycle, 3, epochs[3], fenced=True)
        capsys.readouterr()

        status = await asyncio.to_thread(main, ["brokers", "--bootstrap-server", servers])
        out, err = capsys.readouterr()
        assert (status, err) == (0, "")
        header, *rows = [line.split() for line in out.splitlines()]
        assert header == [
            "ID",
            "HOST:PORT",
            "RACK",
            "FENCED",
            "SHUTTING-DOWN",
            "EPOCH",
            "LEADERS",
            "REPLICAS",
        ]
        assert [row[:4] for row in rows] == [
            ["1", "127.0.0.1:9001", "a", "no"],
            ["2", "127.0.0.1:9002", "b", "no"],
            ["3", "127.0.0.1:9003", "c", "yes"],
        ]
        assert [int(row[5]) for row in rows] == [epochs[1], epochs[2], epochs[3]]
        assert [int(row[6]) for row in rows] == [2, 1, 0]

        status = await asyncio.to_thread(main, ["brokers", "--bootstrap-server", servers, "--json"])
        out, _ = capsys.readouterr()
        view = json.loads(out)
        assert status == 0
        assert view["controller_id"] == (await cluster.wait_for_active()).node_id
        assert [(b["id"], b["fenced"], b["leader_count"]) for b in view["brokers"]] == [
            (1, False, 2),
            (2, False, 1),
            (3, True, 0),
        ]

    run_scenario(scenario, ControllerQuorum(tmp_path, QUIET), 60)


def test_brokers_with_nothing_to_answer_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = tmp_path / "client.properties"
    settings.write_text("request.timeout.ms=200\n")
    with refusing_endpoint() as dead:
        status = main(["brokers", "--bootstrap-server", dead, "--command-config", str(settings)])
    out, err = capsys.readouterr()
    assert (status, out) == (1, "")
    assert err.count("\n") == 1 and dead in err and "(REQUEST_TIMED_OUT)" in err
