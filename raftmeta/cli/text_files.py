"""Reading a file a user named on the command line, with one line for every way it can fail.

A settings file and a plan file fail the same ways (missing, a directory, not UTF-8, not
readable); each command says so in the same words and wraps the line in its own error.
"""

from __future__ import annotations

from pathlib import Path


class UnreadableFile(Exception):
    """The one line that says why ``path`` could not be read; it names the file."""


def read_text_file(path: Path, kind: str) -> str:
    """The UTF-8 text of ``path``; ``kind`` names what it should be (``a JSON file``)."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UnreadableFile(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UnreadableFile(f"{path}: is a directory, not {kind}") from None
    except UnicodeDecodeError as error:
        raise UnreadableFile(f"{path}: not {kind}: byte {error.start} is not UTF-8 text") from None
    except OSError as error:
        raise UnreadableFile(f"{path}: cannot read it: {error.strerror or error}") from None
