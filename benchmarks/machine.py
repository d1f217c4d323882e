"""What machine a benchmark ran on, printed with its figures."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def describe_machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    memory = ""
    try:
        with open("/proc/meminfo", encoding="ascii") as info:
            total_kib = int(info.readline().split()[1])
            memory = f", {total_kib / 2**20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return (
        f"{platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} cores{memory}, "
        f"Python {platform.python_version()}"
    )


def process_cpu_seconds(pid: int) -> float:
    """User plus system CPU time process ``pid`` has used so far, its threads included."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_average() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


class Report:
    """A benchmark's printed lines, kept so they can also be written to its results file.

    It opens with the machine and its load and closes with the load again: on a shared machine
    a figure means little without the load it was taken under.
    """

    def __init__(self, results: Path) -> None:
        self.results = results
        self.lines: list[str] = []

    def out(self, line: str = "") -> None:
        self.lines.append(line)
        print(line, flush=True)

    def start(self) -> None:
        self.out(f"machine: {describe_machine()}")
        self.out(
            f"load average at start: {load_average()} "
            "(the machine is shared: other work ran during the measurement)"
        )

    def save(self) -> None:
        """Write the lines, after one giving the load at the end."""
        self.out(f"load average at end: {load_average()}")
        self.results.parent.mkdir(parents=True, exist_ok=True)
        self.results.write_text("\n".join(self.lines) + "\n", encoding="utf-8")
        print(f"written to {self.results}")
