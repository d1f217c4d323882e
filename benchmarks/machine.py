"""What machine a benchmark ran on, printed with its figures."""

from __future__ import annotations

import os
import platform


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
