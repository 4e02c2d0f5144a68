"""One real Spark session (local[2]) for every engine test, emptied after each."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from neardup.engine.spark_session import released_when_done, spark_session


@pytest.fixture(scope="session")
def shared_spark() -> Iterator[Any]:
    """Spark in this process: two threads, and up to four attempts per task."""
    session = spark_session("local[2,4]", ["spark.sql.shuffle.partitions=4"])
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def spark(shared_spark: Any) -> Iterator[Any]:
    """The shared session, with what the test's jobs cached and checkpointed released after it
    (the driver's heap is 1 GB, as a user's would be by default)."""
    with released_when_done(shared_spark):
        yield shared_spark
