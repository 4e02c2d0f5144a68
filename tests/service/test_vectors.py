"""The service over a vector index file: the same routes, with vectors where texts were, and
answers equal to the library's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from neardup import JoinSpec, VectorIndex
from tests.service.conftest import App, serve_here

DIM = 8
SPEC = JoinSpec(metric="cosine", threshold=0.9, num_bands=16, num_rows=4)


@pytest.fixture
def vectors_server(tmp_path: Path) -> Iterator[App]:
    """The service over a new, empty cosine index of 8-dimensional vectors."""
    path = tmp_path / "vectors.ndx"
    VectorIndex.open(path, spec=SPEC, dim=DIM, create=True).close()
    with serve_here(path) as app:
        yield app


def test_add_query_get_delete_vectors(vectors_server: App) -> None:
    rows = np.random.default_rng(1).normal(size=(30, DIM))
    docs = [{"id": f"v{i}", "vector": row.tolist()} for i, row in enumerate(rows)]
    docs[0]["metadata"] = {"source": "a"}
    with vectors_server.client() as http:
        added = http.post("/v1/documents", json={"documents": docs})
        assert added.status_code == 201, added.text
        assert added.json() == {"added": 30}
        again = http.post("/v1/documents", json={"documents": docs[:1]})
        assert again.status_code == 409
        assert again.json()["error"]["message"].endswith('send "upsert": true to replace them')
        body = {"documents": [{"id": "v1", "vector": [1, 0, 0, 0, 0, 0, 0, 0]}], "upsert": True}
        assert http.post("/v1/documents", json=body).status_code == 201
        info = http.get("/v1/info").json()
        assert info["documents"] == 30
        assert info["measure"] == "cosine"
        assert info["header"]["kind"] == "neardup-vector-index"
        got = http.get("/v1/documents/v0").json()
        assert got == {"id": "v0", "vector": rows[0].tolist(), "metadata": {"source": "a"}}
        assert http.delete("/v1/documents/v2").json() == {"deleted": "v2"}
        assert http.delete("/v1/documents/v2").status_code == 404
        assert http.get("/v1/documents/v2").status_code == 404
        assert http.post("/v1/check", json={"documents": []}).status_code == 404  # texts only
        queries = [*rows[:5].tolist(), [1, 0, 0, 0, 0, 0, 0, 0]]
        answer = http.post("/v1/query", json={"vectors": queries, "k": 2}).json()
    with VectorIndex.open(vectors_server.index_path, create=False) as library:
        expected = library.query(np.array(queries), k=2)
    assert answer == {
        "results": [
            {"query": str(i), "matches": [m.to_dict() for m in matches]}
            for i, matches in enumerate(expected)
        ]
    }
    assert answer["results"][5]["matches"][0] == {"id": "v1", "similarity": 1.0}


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"texts": ["some text"]}, 422, "body.texts: unknown field"),
        ({"vectors": [[1.0, 2.0]]}, 400, "VectorIndex.query needs rows of 8 columns; got 2"),
        ({"vectors": [[1.0] * 8, [1.0] * 7]}, 400, "vectors must be rows of 8 numbers each"),
        ({"vectors": [["1"] * 8]}, 422, "body.vectors.0"),
        ({"vectors": [[1.0] * 8], "k": 0}, 422, "body.k"),
        ({"vectors": [[1.0] * 8], "measure": "cosine"}, 422, "body.measure: unknown field"),
    ],
)
def test_bad_vector_queries_are_refused_naming_what_is_wrong(
    vectors_server: App, body: dict[str, object], status: int, message: str
) -> None:
    with vectors_server.client() as http:
        response = http.post("/v1/query", json=body)
    assert response.status_code == status, response.text
    assert message in response.json()["error"]["message"]


def test_a_hamming_index_takes_whole_words_only(tmp_path: Path) -> None:
    path = tmp_path / "bits.ndx"
    spec = JoinSpec(metric="hamming", threshold=3, num_bands=8, num_rows=8)
    VectorIndex.open(path, spec=spec, dim=128, create=True).close()
    with serve_here(path) as app, app.client() as http:
        words = [2**64 - 1, 12345]
        body = {"documents": [{"id": "a", "vector": words}]}
        assert http.post("/v1/documents", json=body).status_code == 201
        assert http.get("/v1/documents/a").json()["vector"] == words
        found = http.post("/v1/query", json={"vectors": [[2**64 - 1, 12344]]}).json()
        assert found["results"][0]["matches"] == [{"id": "a", "distance": 1.0}]
        for vector, message in [([1.5, 2], "send whole numbers"), ([-1, 2], "out of bounds")]:
            refused = http.post(
                "/v1/documents", json={"documents": [{"id": "b", "vector": vector}]}
            )
            assert refused.status_code == 400, refused.text
            assert message in refused.json()["error"]["message"]
        assert http.get("/v1/documents/b").status_code == 404


def test_openapi_marks_the_vector_writes_as_needing_a_token(vectors_server: App) -> None:
    with vectors_server.client(token=None) as http:
        paths = http.get("/openapi.json").json()["paths"]
        secured = {
            (method, path)
            for path, methods in paths.items()
            for method, operation in methods.items()
            if operation.get("security")
        }
        assert secured == {("post", "/v1/documents"), ("delete", "/v1/documents/{doc_id}")}
        body = {"documents": [{"id": "a", "vector": [1.0] * DIM}]}
        assert http.post("/v1/documents", json=body).status_code == 401
