"""A bounded load test on loopback: concurrent clients adding and querying, no errors, no lost
acknowledged write."""

from __future__ import annotations

import statistics
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.service.conftest import Server

pytestmark = [pytest.mark.service, pytest.mark.slow]

CLIENTS = 8
REQUESTS_PER_CLIENT = 60


def test_concurrent_adds_and_queries(
    real_server: Server, licenses: list[dict[str, object]]
) -> None:
    texts = [str(r["text"]) for r in licenses]

    def client(number: int) -> tuple[list[float], list[str], int]:
        latencies, acked, errors = [], [], 0
        with real_server.client() as http:
            for step in range(REQUESTS_PER_CLIENT):
                start = time.perf_counter()
                if step % 2 == 0:
                    ids = [f"c{number}-s{step}-{i}" for i in range(5)]
                    docs = [
                        {"id": d, "text": texts[(number * 97 + step * 5 + i) % len(texts)]}
                        for i, d in enumerate(ids)
                    ]
                    response = http.post("/v1/documents", json={"documents": docs})
                    if response.status_code == 201:
                        acked.extend(ids)
                else:
                    response = http.post(
                        "/v1/query", json={"texts": texts[step : step + 5], "k": 3}
                    )
                latencies.append(time.perf_counter() - start)
                errors += response.status_code >= 400
        return latencies, acked, errors

    started = time.perf_counter()
    with ThreadPoolExecutor(CLIENTS) as pool:
        outcomes = list(pool.map(client, range(CLIENTS)))
    elapsed = time.perf_counter() - started
    latencies = sorted(x for lat, _, _ in outcomes for x in lat)
    acked = [doc for _, ids, _ in outcomes for doc in ids]
    assert sum(e for _, _, e in outcomes) == 0
    with real_server.client() as http:
        assert http.get("/v1/info").json()["documents"] == len(acked)
        for doc in acked[:: max(1, len(acked) // 50)]:
            assert http.get(f"/v1/documents/{doc}").status_code == 200
    p50 = statistics.median(latencies) * 1000
    p99 = latencies[int(0.99 * (len(latencies) - 1))] * 1000
    print(
        f"\nload: {len(latencies)} requests from {CLIENTS} clients in {elapsed:.2f} s "
        f"({len(latencies) / elapsed:.0f} req/s), p50 {p50:.1f} ms, p99 {p99:.1f} ms, "
        f"{len(acked)} documents acknowledged"
    )
