"""One real Spark session (local[2]) for every engine test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from neardup.engine.spark import spark_session


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """Spark in this process: two threads, and up to four attempts per task."""
    session = spark_session("local[2,4]", ["spark.sql.shuffle.partitions=4"])
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
