"""Every ``raftmeta`` subcommand driven with generated arguments and small generated files.

Each example builds a command line from the command's own options (read from the parser), with
values drawn from numbers at and beyond every limit, odd strings, small files of random bytes,
properties, JSON and deep nesting, directories, ``/dev/null``, missing paths, and bootstrap
servers that are malformed, unresolvable or refuse connections (127.0.0.1 ports nothing
listens on; never a real quorum). It runs ``main()`` in this process, in a thread with a time
limit, and asserts what issue 17 promises for every command: exit status 0, 1 or 2, no
exception out of ``main`` (no traceback), at most one line on stderr on failure (warnings about
ignored settings keys aside), and an answer within the limit.

Commands that serve rather than answer (``serve``, ``broker``, ``dev``, the live ``demo``)
would legitimately run until stopped given a valid command line; each of their examples carries
one bad ingredient (an unknown option, a malformed number, a missing or unreadable
configuration), so the examples test their refusals, never a running node. ``demo`` otherwise
runs ``--simulated``, ``audit`` ``--engine plain`` and ``soak`` a handful of seeds.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raftmeta.cli.client_config import ignored_key_warning
from raftmeta.cli.main import build_parser, main
from tests.admin.fake_nodes import refusing_endpoint

TIME_LIMIT_S = 10.0
"""Per command line. A refused connection now fails in about a second; the limit is far above
that and below the 15 s and unbounded waits the generated campaign found."""

EXAMPLES_PER_COMMAND = 30
"""Sixteen commands and actions: about 500 command lines a run, in well under a minute."""

SERVING = {"serve", "broker", "dev", "chaos", "spark-cluster"}
"""Commands that run until stopped, or for minutes (``chaos``), when their command line is
valid: fuzzed with a bad ingredient in every example (``demo`` runs ``--simulated`` otherwise;
``spark-cluster`` would start Spark's JVMs)."""


@dataclass(frozen=True, slots=True)
class Option:
    strings: tuple[str, ...]
    takes_value: bool
    choices: tuple[str, ...] | None
    required: bool


def commands() -> dict[tuple[str, ...], list[Option]]:
    """Every command and action, with its options and positionals (as ``Option`` with no
    strings), read from the real parser so that a new option is fuzzed without a change here."""
    found: dict[tuple[str, ...], list[Option]] = {}

    def walk(parser: argparse.ArgumentParser, prefix: tuple[str, ...]) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if subs:
            for name, child in subs[0].choices.items():
                walk(child, (*prefix, name))
            return
        options = []
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            choices = tuple(str(c) for c in action.choices) if action.choices else None
            required = action.required or action.dest in USUALLY_GIVEN
            options.append(
                Option(tuple(action.option_strings), action.nargs != 0, choices, required)
            )
        found[prefix] = options

    walk(build_parser(), ())
    return found


USUALLY_GIVEN = {"bootstrap_server", "election_type", "config"}
"""Options most examples give, so that they get past the first check to the interesting ones."""

COMMANDS = commands()


@dataclass
class Ground:
    """Files and endpoints the generated values point at, made once per test."""

    root: Path
    refusing: str

    def file(self, name: str, contents: bytes) -> str:
        path = self.root / name
        path.write_bytes(contents)
        return str(path)


PROPERTY_KEYS = (
    "request.timeout.ms",
    "default.api.timeout.ms",
    "bearer.token",
    "security.protocol",
    "ssl.truststore.location",
    "node.id",
    "process.roles",
    "controller.quorum.voters",
    "metadata.log.dir",
    "sasl.mechanism",
)

# No NUL: a real command line cannot carry one (argv entries are C strings).
NUMBERS = st.sampled_from(
    [
        *["0", "-1", "1", "7", "65536", "2147483647", "2147483648", "99999999999999999999"],
        *["1e3", "9" * 5000, "0x10", " 3", "NaN", "inf", "-0"],
    ]
)
WORDS = st.sampled_from(
    [
        *["", " ", "-", "--", "x", "orders", "PREFERRED", "unclean", "User:alice", "*", "a" * 300],
        *["bad!", "\u00e9t\u00e9", "line\nbreak", "tab\there", "LITERAL", "Read", "topic=x"],
    ]
)


def endpoints(ground: Ground) -> st.SearchStrategy[str]:
    return st.sampled_from(
        [
            ground.refusing,
            f"{ground.refusing},{ground.refusing}",
            "no-such-host.invalid:9093",
            "127.0.0.1",
            "127.0.0.1:0",
            "127.0.0.1:70000",
            "[::1",
            ":9093",
            "",
            ",",
        ]
    )


@st.composite
def files(draw: st.DrawFn, ground: Ground) -> str:
    """A path to something small and probably wrong."""
    kind = draw(st.sampled_from(["bytes", "properties", "json", "nested", "special"]))
    name = f"f{draw(st.integers(0, 10**9))}"
    if kind == "bytes":
        return ground.file(name, draw(st.binary(max_size=64)))
    if kind == "properties":
        lines = draw(
            st.lists(
                st.tuples(st.sampled_from(PROPERTY_KEYS), st.one_of(NUMBERS, WORDS)),
                max_size=4,
            )
        )
        text = "".join(f"{key}={value}\n" for key, value in lines)
        return ground.file(name, text.encode("utf-8", "surrogatepass"))
    if kind == "json":
        partitions = draw(
            st.lists(
                st.fixed_dictionaries(
                    {"topic": st.one_of(WORDS, st.integers()), "partition": st.integers()}
                ),
                max_size=3,
            )
        )
        body = draw(st.sampled_from([{"partitions": partitions}, partitions, {}]))
        import json

        return ground.file(name, json.dumps(body).encode())
    if kind == "nested":
        depth = draw(st.sampled_from([10, 1000, 100_000]))
        return ground.file(name, b"[" * depth + draw(st.sampled_from([b"", b"]" * depth])))
    return draw(
        st.sampled_from(
            [str(ground.root), "/dev/null", str(ground.root / "missing"), str(ground.root / "d")]
        )
    )


def values(option: Option, ground: Ground) -> st.SearchStrategy[str]:
    if option.choices:
        return st.one_of(st.sampled_from(option.choices), WORDS)
    if "bootstrap" in " ".join(option.strings):
        return endpoints(ground)
    return st.one_of(NUMBERS, WORDS, files(ground))


@st.composite
def command_lines(draw: st.DrawFn, ground: Ground, words: tuple[str, ...]) -> list[str]:
    options = COMMANDS[words]
    argv = list(words)
    usual = [option for option in options if option.required and draw(st.integers(0, 9)) > 0]
    others = draw(st.lists(st.sampled_from(options), max_size=4)) if options else []
    chosen = draw(st.permutations(usual + others))
    for option in chosen:
        if not option.strings:  # a positional
            argv.append(draw(st.one_of(files(ground), WORDS)))
        elif option.takes_value:
            argv += [draw(st.sampled_from(option.strings)), draw(values(option, ground))]
        else:
            argv.append(draw(st.sampled_from(option.strings)))
    if words[0] == "demo":
        argv.append("--simulated")
    if words[0] == "audit":
        argv += ["--engine", "plain", "--out", str(ground.root / "audit-out")]
    if words[0] == "soak":
        argv += ["--count", draw(st.sampled_from(["0", "1", "2", "-1", "x"]))]
    if words[0] in SERVING:
        bad = draw(
            st.sampled_from(
                [
                    ["--no-such-option"],
                    ["--config", str(ground.root / "missing.properties")],
                    ["--config", str(ground.root)],
                    ["--base-port", "x"],
                    ["--broker-id", "1e3"],
                    ["--seed", "seven"],
                ]
            )
        )
        position = draw(st.integers(1, len(argv)))
        argv[position:position] = bad
        if words[0] in {"serve", "broker"} and "--no-such-option" not in bad:
            # Their refusal must come from the bad ingredient, whatever else was drawn.
            argv.append("--no-such-option")
    return argv


def run_in_thread(argv: list[str]) -> tuple[int | None, str, str, BaseException | None]:
    """``main(argv)`` with stdout and stderr captured; status None if it did not finish."""
    out, err = io.StringIO(), io.StringIO()
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["status"] = main(argv)
        except SystemExit as exit_:  # --help and argparse's own exits
            outcome["status"] = exit_.code if isinstance(exit_.code, int) else 2
        except BaseException as error:  # anything else is a traceback in a real run
            outcome["error"] = error

    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        worker = threading.Thread(target=target, daemon=True)
        worker.start()
        worker.join(TIME_LIMIT_S)
    return outcome.get("status"), out.getvalue(), err.getvalue(), outcome.get("error")


def failure_lines(err: str) -> list[str]:
    """stderr's lines, without the warnings Kafka's tools also give about ignored keys."""
    return [
        line
        for line in err.splitlines()
        if line.strip()
        and not (line.startswith("The configuration '") and line.endswith(IGNORED_SUFFIX))
    ]


IGNORED_SUFFIX = ignored_key_warning("k").split("'k'", 1)[1]


def test_the_fuzz_covers_every_command() -> None:
    assert {words[0] for words in COMMANDS} >= {
        "topics",
        "brokers",
        "leader-election",
        "acls",
        "quorum",
        "audit",
        "log",
        "format",
        "serve",
        "broker",
        "dev",
        "demo",
    }


@pytest.mark.parametrize("words", sorted(COMMANDS), ids=" ".join)
def test_generated_command_lines_exit_0_1_or_2_in_one_line_and_in_time(
    words: tuple[str, ...], tmp_path: Path
) -> None:
    (tmp_path / "d").mkdir()
    with refusing_endpoint() as refusing:
        ground = Ground(tmp_path, refusing)

        @settings(
            max_examples=EXAMPLES_PER_COMMAND,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(command_lines(ground, words))
        def check(argv: list[str]) -> None:
            status, out, err, error = run_in_thread(argv)
            if error is not None:
                raise AssertionError(f"{argv}: {type(error).__name__}: {error}") from error
            assert status is not None, f"{argv}: no answer within {TIME_LIMIT_S} s"
            assert status in (0, 1, 2), (argv, status, out, err)
            assert "Traceback" not in err, (argv, err)
            if status != 0:
                lines = failure_lines(err)
                assert len(lines) <= 1, (argv, err)
                if not lines:  # a failure must say something, on stderr or (Kafka's) stdout
                    assert out.strip(), (argv, "exit", status, "with nothing said")

        check()


@pytest.mark.parametrize(
    "argv",
    [
        ["leader-election", "--election-type", "preferred", "--all-topic-partitions"],
        ["demo", "--simulated", "--seed", "7"],
    ],
)
def test_known_findings_stay_fixed(argv: list[str], tmp_path: Path) -> None:
    status, out, err, error = run_in_thread(argv)
    assert error is None and status in (0, 2) and len(failure_lines(err)) <= 1, (out, err)
