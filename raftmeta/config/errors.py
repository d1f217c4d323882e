"""The one error type of configuration: a setting an operator must fix, said in one line.

Its own module so that the ``.properties`` reader, the key table and the command line can all
raise or catch it without importing one another.
"""

from __future__ import annotations

from typing import Final


class ConfigError(ValueError):
    """A missing or invalid setting; the message is one line that names the key.

    The CLI relies on the message being complete and single-line: it prints it as is and exits
    with :attr:`exit_code`, the conventional status for a usage error.
    """

    exit_code: Final = 2

    def __init__(self, message: str) -> None:
        super().__init__(message.replace("\r", " ").replace("\n", " "))
