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
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"

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
    on_this_machine = chosen.startswith("local") or _loopback(chosen)
    if on_this_machine:
        # Executors on another machine must reach the driver: only a local or loopback
        # master keeps everything on 127.0.0.1.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    log_config = f"-Dlog4j2.configurationFile=file:{_log4j2_file()}"
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
        .config("spark.driver.extraJavaOptions", log_config)
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
        builder = builder.config("spark.driver.bindAddress", "127.0.0.1").config(
            "spark.sql.shuffle.partitions", "4"
        )
    for key, value in (settings or {}).items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as error:  # the JVM failed to start: report it in one line
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        raise SparkUnavailableError(f"Spark did not start: {first_line}") from None
    spark.sparkContext.setLogLevel("ERROR")
    from analytics.spark_source import RaftmetaDataSource

    spark.dataSource.register(RaftmetaDataSource)
    return spark
