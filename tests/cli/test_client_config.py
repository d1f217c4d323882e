"""Client settings files: one reader, one settings type and one behaviour for both
``--admin.config`` (``leader-election``) and ``--command-config`` (``topics``, ``brokers``).

The unit tests read the file format and values; the others run the real command lines on the
same file and check that the two flags agree: the same keys, the same warning for a key raftmeta
does not read (and the command goes on, as Kafka's tools do), the same message for a file that
cannot be used, and the same exit status for it: 2, a configuration error.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from raftmeta.cli import client_config
from raftmeta.cli.main import main
from tests.admin.fake_nodes import refusing_endpoint

WARNING = "The configuration 'sasl.mechanism' was supplied but isn't a known config."


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def topics(bootstrap: str, settings: Path) -> list[str]:
    return ["topics", "--bootstrap-server", bootstrap, "--list", "--command-config", str(settings)]


def brokers(bootstrap: str, settings: Path) -> list[str]:
    return ["brokers", "--bootstrap-server", bootstrap, "--command-config", str(settings)]


def leader_election(bootstrap: str, settings: Path) -> list[str]:
    return [
        "leader-election",
        "--bootstrap-server",
        bootstrap,
        "--election-type",
        "preferred",
        "--all-topic-partitions",
        "--admin.config",
        str(settings),
    ]


# --- the file ----------------------------------------------------------------------------------


def test_unknown_admin_config_keys_are_kept_for_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "admin.properties"
    path.write_text("sasl.mechanism=PLAIN\nbearer.token=t\n")
    settings = client_config.read_client_config(path)
    assert settings.ignored_keys == ("sasl.mechanism",) and settings.bearer_token == "t"
    assert client_config.ignored_key_warning("sasl.mechanism") == (
        "The configuration 'sasl.mechanism' was supplied but isn't a known config."
    )


def test_admin_config_reads_token_and_timeouts() -> None:
    settings = client_config.parse_client_config(
        "# client settings\nbearer.token = abc\ndefault.api.timeout.ms=2500\n"
        "security.protocol=PLAINTEXT\n"
    )
    assert settings == client_config.ClientSettings(
        "abc",
        client_config.REQUEST_TIMEOUT_MS,
        2500,
        tls_properties=(("security.protocol", "PLAINTEXT"),),
    )
    assert settings.ignored_keys == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "request.timeout.ms=soon",
            "Invalid value soon for configuration request.timeout.ms: Not a number of type INT",
        ),
        (
            "default.api.timeout.ms=-5",
            "Invalid value -5 for configuration default.api.timeout.ms: Value must be at least 0",
        ),
        ("bearer.token=", "Invalid value for configuration bearer.token: empty"),
    ],
)
def test_bad_admin_config_values(text: str, message: str) -> None:
    with pytest.raises(client_config.ClientConfigError) as raised:
        client_config.parse_client_config(text)
    assert str(raised.value) == message


def test_a_multi_line_token_is_refused() -> None:
    with pytest.raises(client_config.ClientConfigError) as raised:
        client_config.parse_client_config("bearer.token=a\\nb\n")
    assert str(raised.value) == "Invalid value for configuration bearer.token: more than one line"


def test_settings_become_an_admin_client_config() -> None:
    settings = client_config.ClientSettings("t", 0, 100)
    assert settings.admin_config("h:1") == {
        "bootstrap.servers": "h:1",
        "request.timeout.ms": 1,
        "bootstrap.unreachable.timeout.ms": client_config.UNREACHABLE_TIMEOUT_MS,
        "bearer.token": "t",
    }
    assert client_config.ClientSettings().admin_config("h:1") == {
        "bootstrap.servers": "h:1",
        "request.timeout.ms": client_config.REQUEST_TIMEOUT_MS,
        "bootstrap.unreachable.timeout.ms": client_config.UNREACHABLE_TIMEOUT_MS,
    }


# --- both flags on the same file ---------------------------------------------------------------


def test_both_flags_warn_about_an_unknown_key_and_go_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = tmp_path / "client.properties"
    settings.write_text("sasl.mechanism=PLAIN\nrequest.timeout.ms=300\n")
    with refusing_endpoint() as dead:
        for command in (topics, brokers):
            status, out, err = run(capsys, *command(dead, settings))
            warning, failure = err.splitlines()
            assert (status, out, warning) == (1, "", WARNING)
            assert dead in failure and failure.endswith("(REQUEST_TIMED_OUT)")
        status, out, err = run(capsys, *leader_election(dead, settings))
    assert (status, out, err) == (1, "Timeout waiting for election results\n", WARNING + "\n")


def test_both_flags_wait_no_longer_than_default_api_timeout_ms(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = tmp_path / "client.properties"
    settings.write_text("request.timeout.ms=60000\ndefault.api.timeout.ms=300\n")
    with refusing_endpoint() as dead:
        for command in (topics, brokers):
            started = time.monotonic()
            status, out, err = run(capsys, *command(dead, settings))
            assert time.monotonic() - started < 30
            assert (status, out) == (1, "")
            assert err.endswith(
                ": no answer within default.api.timeout.ms (300 ms) (REQUEST_TIMED_OUT)\n"
            )
        started = time.monotonic()
        status, out, err = run(capsys, *leader_election(dead, settings))
    assert time.monotonic() - started < 30
    assert (status, out, err) == (1, "Timeout waiting for election results\n", "")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "request.timeout.ms=soon\n",
            "Invalid value soon for configuration request.timeout.ms: Not a number of type INT",
        ),
        (
            "default.api.timeout.ms=-5\n",
            "Invalid value -5 for configuration default.api.timeout.ms: Value must be at least 0",
        ),
        ("bearer.token=\n", "Invalid value for configuration bearer.token: empty"),
        ("bearer.token=\\u12\n", "Malformed \\uXXXX escape in the value of bearer.token"),
    ],
)
def test_both_flags_refuse_a_bad_file_with_the_same_message(
    text: str, problem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = tmp_path / "client.properties"
    settings.write_text(text)
    message = f"{settings}: {problem}"
    for command in (topics, brokers):
        status, out, err = run(capsys, *command("127.0.0.1:1", settings))
        assert (status, out) == (2, "")
        assert err.startswith(f"--command-config {message}") and err.count("\n") == 1
    status, out, err = run(capsys, *leader_election("127.0.0.1:1", settings))
    assert (status, out) == (2, "")
    assert err.startswith(message) and err.count("\n") == 1


def test_both_flags_name_a_missing_file_the_same_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.properties"
    for command in (topics, brokers):
        assert run(capsys, *command("127.0.0.1:1", missing)) == (
            2,
            "",
            f"--command-config {missing}: no such file\n",
        )
    assert run(capsys, *leader_election("127.0.0.1:1", missing)) == (
        2,
        "",
        f"{missing}: no such file\n",
    )
