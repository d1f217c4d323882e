"""Java properties syntax: each case is something a Kafka operator's file may contain."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raftmeta.config.errors import ConfigError
from raftmeta.config.properties import format_properties, parse_properties


@pytest.mark.parametrize(
    "text",
    [
        "key=value",
        "key = value",
        "key:value",
        "key : value",
        "key value",
        "key\tvalue",
        "   key=value",
        "key  =  value",
        "\fkey=value",
    ],
)
def test_every_separator_form_gives_the_same_pair(text: str) -> None:
    assert parse_properties(text) == {"key": "value"}


def test_only_the_first_separator_splits() -> None:
    assert parse_properties("a=b=c") == {"a": "b=c"}
    assert parse_properties("a = = c") == {"a": "= c"}
    assert parse_properties("a : b:c") == {"a": "b:c"}
    assert parse_properties("url=http://h:1/x") == {"url": "http://h:1/x"}


def test_comments_and_blank_lines_are_skipped() -> None:
    text = "# hash comment\n! bang comment\n   # indented comment\n\n \t \na=1\n"
    assert parse_properties(text) == {"a": "1"}


def test_comment_characters_inside_a_value_are_kept() -> None:
    assert parse_properties("a=1 # not a comment") == {"a": "1 # not a comment"}


def test_a_comment_line_is_never_continued() -> None:
    assert parse_properties("# comment \\\na=1") == {"a": "1"}


def test_key_without_value_is_empty() -> None:
    assert parse_properties("lonely\nalso=\nthird :") == {"lonely": "", "also": "", "third": ""}


def test_trailing_whitespace_of_a_value_is_kept() -> None:
    assert parse_properties("a=1  \t") == {"a": "1  \t"}


def test_continuation_joins_lines_and_drops_leading_whitespace() -> None:
    text = "voters=1@a:1,\\\n        2@b:2,\\\n\t3@c:3\nnext=x"
    assert parse_properties(text) == {"voters": "1@a:1,2@b:2,3@c:3", "next": "x"}


def test_continuation_line_starting_with_hash_is_not_a_comment() -> None:
    assert parse_properties("a=1\\\n  #2") == {"a": "1#2"}


def test_continuation_into_a_blank_line_ends_the_entry() -> None:
    assert parse_properties("a=1\\\n\nb=2") == {"a": "1", "b": "2"}


def test_even_run_of_backslashes_is_not_a_continuation() -> None:
    assert parse_properties("a=x\\\\\nb=y") == {"a": "x\\", "b": "y"}
    assert parse_properties("a=x\\\\\\\ny") == {"a": "x\\y"}


def test_backslash_at_end_of_file_is_dropped() -> None:
    assert parse_properties("a=x\\") == {"a": "x"}


def test_key_continued_over_lines() -> None:
    assert parse_properties("metadata.\\\n  log.dir=/d") == {"metadata.log.dir": "/d"}


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_all_line_endings(ending: str) -> None:
    text = ending.join(["# c", "a=1", "b=2\\", "  3", ""])
    assert parse_properties(text) == {"a": "1", "b": "23"}


def test_escapes_in_values() -> None:
    text = r"a=tab\there\nnl\rcr\fff \u00e9\u20AC \\ \= \: \# \! \q"
    assert parse_properties(text) == {"a": "tab\there\nnl\rcr\fff é€ \\ = : # ! q"}


def test_escaped_separators_and_spaces_belong_to_the_key() -> None:
    text = r"my\ key\=with\:stuff = v"
    assert parse_properties(text) == {"my key=with:stuff": "v"}


def test_escaped_leading_space_of_a_value_is_kept() -> None:
    assert parse_properties(r"a=\ padded") == {"a": " padded"}


def test_later_duplicate_wins() -> None:
    assert parse_properties("a=1\na=2") == {"a": "2"}


def test_unicode_text_is_taken_as_is() -> None:
    assert parse_properties("größe=wert") == {"größe": "wert"}


@pytest.mark.parametrize("bad", [r"a=\u12", r"a=\uXYZW", r"a=\u"])
def test_malformed_unicode_escape_names_key_and_line(bad: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_properties("# first\n" + bad)
    message = str(raised.value)
    assert "the value of a" in message
    assert "line 2" in message
    assert "\n" not in message


def test_malformed_unicode_escape_in_key() -> None:
    with pytest.raises(ConfigError, match="in a key on line 1"):
        parse_properties(r"k\u1=v")


@given(
    st.dictionaries(
        st.text(),
        st.text(),
    )
)
def test_format_then_parse_round_trips(properties: dict[str, str]) -> None:
    assert parse_properties(format_properties(properties)) == properties


def test_format_escapes_what_java_would_misread() -> None:
    text = format_properties({"a key": " lead=x:y#\n"})
    assert text == "a\\ key=\\ lead\\=x\\:y\\#\\n\n"


def test_the_file_format_loads_without_the_key_table() -> None:
    """``meta.properties`` and the command line's client settings read this format alone."""
    import subprocess
    import sys

    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, raftmeta.config.properties; "
            "print(sorted(m for m in sys.modules if m.startswith('raftmeta')))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "raftmeta.config.keys" not in loaded and "raftmeta.config.node" not in loaded
