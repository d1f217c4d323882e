"""PySpark analytics over snapshot and log files."""
