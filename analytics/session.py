"""Starting Spark the way this project needs it.

Local by default (``local[*]``), or the master named by ``--master`` / ``SPARK_MASTER``. The
Python workers must run this interpreter (``PYSPARK_PYTHON``), so they can import the data
source and pyarrow; the web UI is off and Spark binds to loopback, so an audit opens no port to
the network; log4j is told to keep quiet below WARN so the output is the audit's, not Spark's.

On a cluster the executors read the files themselves (see :mod:`analytics.files`), so the
standard ``AWS_*`` variables set here (credentials, region, ``AWS_ENDPOINT_URL``) are passed to
them as ``spark.executorEnv.*``; executors with credentials of their own (an instance role)
need none of them set.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
MASTER_PROBE_TIMEOUT_S = 3.0
"""How long a ``spark://`` master gets to accept a connection before the audit gives up: Spark
itself retries registering for over a minute and then names neither the URL nor the cause."""

_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
"""


LOCAL_JVM_OPTIONS = (
    "-XX:TieredStopAtLevel=1",
    "-XX:+UseSerialGC",
    "-XX:CICompilerCount=1",
)
"""For a ``local`` master, whose JVM lives for one audit: compile with the quick compiler
only and collect garbage on one thread. Starting the session and its first queries then
costs about 40 % less CPU (the optimising compiler and the parallel collector's threads are
the JVM's largest start-up cost and pay off only over minutes), which on a machine with two
busy cores is most of the time an audit takes. Clusters keep the JVM's defaults."""

FORWARDED_ENVIRONMENT = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
)
"""What executors need to reach the storage the driver planned from."""


class SparkUnavailableError(Exception):
    """Spark cannot start here (no Java, no pyspark); the message is one line."""


def resolve_master(master: str | None) -> str:
    return master or os.environ.get("SPARK_MASTER") or DEFAULT_MASTER


def _loopback(master: str) -> bool:
    """A ``spark://`` master on this machine's loopback (as the tests start one)."""
    hosts = re.findall(r"(?:spark://|,)\[?([^:/,\]]+)", master)
    return bool(hosts) and all(host in ("127.0.0.1", "localhost", "::1") for host in hosts)


def _check_java() -> None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return
    if shutil.which("java") is None:
        raise SparkUnavailableError(
            "Java was not found (install a JDK 17 or 21, or set JAVA_HOME); Spark needs it"
        )


def _master_addresses(master: str) -> list[tuple[str, int]]:
    """``(host, port)`` of each master of a ``spark://h1:p1,h2:p2`` URL."""
    addresses = []
    for part in master[len("spark://") :].split(","):
        host, colon, port = part.strip().rstrip("/").rpartition(":")
        if not colon or not port.isdigit():
            raise SparkUnavailableError(f"Spark master {master}: {part!r} is not HOST:PORT")
        addresses.append((host.strip("[]"), int(port)))
    return addresses


def _why_unreachable(host: str, port: int, timeout_s: float) -> str | None:
    """Why nothing accepts a TCP connection at ``host:port``, or ``None`` if something does."""
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except socket.gaierror as error:
        return f"cannot resolve {host} ({error.strerror or error})"
    except ConnectionRefusedError:
        return f"connection refused at {host}:{port}"
    except TimeoutError:
        return f"no answer from {host}:{port} within {timeout_s:g} s"
    except OSError as error:
        return f"{host}:{port}: {error.strerror or error}"
    return None


def check_master(master: str, timeout_s: float = MASTER_PROBE_TIMEOUT_S) -> None:
    """Fails in one line naming the URL and the cause when no master of a ``spark://`` URL
    accepts a connection; other masters (``local``, ``yarn``, ``k8s://``) are not probed."""
    if not master.startswith("spark://"):
        return
    causes = []
    for host, port in _master_addresses(master):
        cause = _why_unreachable(host, port, timeout_s)
        if cause is None:
            return
        causes.append(cause)
    raise SparkUnavailableError(f"Spark master {master} is unreachable: {'; '.join(causes)}")


def failure_cause(error: BaseException) -> str:
    """The first line of the innermost cause of a Spark start-up failure: a Py4J error's Java
    exception chain is followed to its root, where the message that explains it lives."""
    java = getattr(error, "java_exception", None)
    message = ""
    if java is not None:
        try:
            while java.getCause() is not None:
                java = java.getCause()
            message = f"{java.getClass().getName()}: {java.getMessage()}"
        except Exception:  # the gateway itself may be gone
            message = ""
    if not message:
        message = str(error).strip()
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


def _log4j2_file() -> Path:
    path = Path(tempfile.gettempdir()) / f"raftmeta-log4j2-{os.getuid()}.properties"
    if not path.exists() or path.read_text() != _LOG4J2:
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(_LOG4J2)
        os.replace(partial, path)
    return path


def get_spark(
    master: str | None = None,
    app_name: str = "raftmeta",
    settings: Mapping[str, str] | None = None,
) -> SparkSession:
    """The process's SparkSession (created on first call), with the raftmeta source registered.

    ``settings`` are Spark properties applied last (``raftmeta audit --conf KEY=VALUE``), for
    what a cluster needs: executor memory, shuffle partitions, a filesystem's options."""
    _check_java()
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise SparkUnavailableError(
            "pyspark is not installed; install raftmeta with the spark extra"
        ) from None
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    chosen = resolve_master(master)
    check_master(chosen)
    on_this_machine = chosen.startswith("local") or _loopback(chosen)
    if on_this_machine:
        # Executors on another machine must reach the driver: only a local or loopback
        # master keeps everything on 127.0.0.1.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    log_config = f"-Dlog4j2.configurationFile=file:{_log4j2_file()}"
    driver_options = log_config
    if chosen.startswith("local"):
        driver_options = " ".join((log_config, *LOCAL_JVM_OPTIONS))
    builder = SparkSession.builder
    # Under spark-submit the JVM already exists (its port is in PYSPARK_GATEWAY_PORT) and
    # spark-submit's --master is the one to use, unless one was named here explicitly.
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ
    if master is not None or not submitted:
        builder = builder.master(chosen)
    builder = (
        builder.appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.extraJavaOptions", driver_options)
        .config("spark.executor.extraJavaOptions", log_config)
        .config("spark.sql.session.timeZone", "UTC")
    )
    for name in FORWARDED_ENVIRONMENT:
        if name in os.environ:
            builder = builder.config(f"spark.executorEnv.{name}", os.environ[name])
    if on_this_machine and not chosen.startswith("local") and not submitted:
        builder = builder.config("spark.driver.host", "127.0.0.1").config(
            "spark.driver.bindAddress", "127.0.0.1"
        )
    if chosen.startswith("local") and not submitted:
        # Cached frames stay uncompressed: on one machine the audit's caches are tens of
        # megabytes, and choosing and applying each column's encoding was a third of the
        # CPU it takes to fill them.
        builder = (
            builder.config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", "4")
            .config("spark.sql.inMemoryColumnarStorage.compressed", "false")
        )
    for key, value in (settings or {}).items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as error:  # the JVM failed to start: report it in one line
        raise SparkUnavailableError(
            f"Spark did not start (master {chosen}): {failure_cause(error)}"
        ) from None
    spark.sparkContext.setLogLevel("ERROR")
    from analytics.spark_source import RaftmetaDataSource

    spark.dataSource.register(RaftmetaDataSource)
    return spark
