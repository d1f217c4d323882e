"""``raftmeta acls`` on a real quorum with the log-backed authorizer on: the super user adds an
ACL, every controller then lets alice elect leaders, the listing shows it in Kafka's layout, and
removing it takes her right away again."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from raftmeta.auth import CLUSTER_NAME, Operation, ResourceType
from raftmeta.cli.main import main
from tests.support.controller_quorum import ControllerQuorum
from tests.support.scenario import run_scenario
from tests.support.waiting import wait_until_async


def _command_config(tmp_path: Path, token: str) -> Path:
    path = tmp_path / f"{token}.properties"
    path.write_text(f"bearer.token={token}\n")
    return path


def test_acls_are_added_listed_and_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("root-token=User:root\nalice-token=User:alice\n")
    root = _command_config(tmp_path, "root-token")
    alice = _command_config(tmp_path, "alice-token")

    async def scenario(cluster: ControllerQuorum) -> None:
        servers = ",".join(cluster.addresses.values())

        async def acls(config: Path, *args: str) -> tuple[int, str, str]:
            base = ["acls", "--bootstrap-server", servers, "--command-config", str(config)]
            status = await asyncio.to_thread(main, [*base, *args])
            out, err = capsys.readouterr()
            return status, out, err

        def alice_may_alter() -> bool:
            return all(
                member.access.allowed(
                    "User:alice", Operation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME
                )
                for member in cluster.members.values()
            )

        grant = ("--cluster", "--allow-principal", "User:alice", "--operation", "Alter")
        status, _, err = await acls(alice, "--add", *grant)
        assert status == 1 and "CLUSTER_AUTHORIZATION_FAILED" in err
        assert err.count("\n") == 1

        status, out, err = await acls(root, "--add", *grant)
        assert (status, err) == (0, "")
        assert "principal=User:alice, host=*, operation=ALTER, permissionType=ALLOW" in out
        await wait_until_async(alice_may_alter, "every controller to let alice alter")

        status, out, _ = await acls(root, "--list", "--cluster")
        assert status == 0
        assert out.startswith(
            "Current ACLs for resource `ResourcePattern(resourceType=CLUSTER, "
            "name=kafka-cluster, patternType=LITERAL)`: "
        )
        assert "operation=ALTER" in out

        status, out, _ = await acls(
            root, "--remove", "--cluster", "--allow-principal", "User:alice", "--force"
        )
        assert (status, out.splitlines()[0]) == (0, "Removed 1 ACL(s):")
        await wait_until_async(lambda: not alice_may_alter(), "alice's right to go")
        status, out, _ = await acls(root, "--list")
        assert (status, out) == (0, "")

    run_scenario(
        scenario,
        ControllerQuorum(
            tmp_path,
            {
                "authorizer.class.name": "raftmeta.auth.StandardAuthorizer",
                "super.users": "User:root",
                "raftmeta.auth.tokens.file": str(tokens),
                "auto.leader.rebalance.enable": False,
            },
        ),
    )


@pytest.mark.parametrize(
    "args",
    [
        ["--add", "--topic", "t"],
        ["--add", "--allow-principal", "User:a"],
        ["--add", "--topic", "t", "--allow-principal", "alice"],
        ["--add", "--topic", "t", "--allow-principal", "User:a", "--operation", "Fly"],
        ["--add", "--topic", "t", "--allow-principal", "User:a", "--resource-pattern-type", "any"],
        ["--topic", "t"],
    ],
)
def test_usage_errors_exit_2_with_one_line(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["acls", "--bootstrap-server", "127.0.0.1:1", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
