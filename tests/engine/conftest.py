"""One real Spark session (local[2]) for every engine test, emptied after each."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from neardup.engine.spark_session import released_when_done, spark_session

GC_LOCKER_RETRIES = (
    "spark.driver.extraJavaOptions="
    "-XX:+UnlockDiagnosticVMOptions -XX:GCLockerRetryAllocationCount=100"
)
"""A broadcast's allocation waits out the JVM's GC locker rather than failing after two tries.

On two busy cores (pytest's other worker beside Spark's tasks) the JVM logged "Retried waiting
for GCLocker too often allocating 2097154 words" and Spark failed the run with "Not enough
memory to build and broadcast the table": the allocation gave up while other threads held the
GC locker (JNI critical sections), after the default two tries (two keep-by tests, in two
clean-clone runs of 11-29 and 11-30)."""


@pytest.fixture(scope="session")
def shared_spark() -> Iterator[Any]:
    """Spark in this process: two threads, and up to four attempts per task."""
    session = spark_session("local[2,4]", ["spark.sql.shuffle.partitions=4", GC_LOCKER_RETRIES])
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def spark(shared_spark: Any) -> Iterator[Any]:
    """The shared session, with what the test's jobs cached and checkpointed released after it
    (the driver's heap is 1 GB, as a user's would be by default)."""
    with released_when_done(shared_spark):
        yield shared_spark
