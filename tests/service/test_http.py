"""The HTTP service, driven through its ASGI application (a streamed body over real HTTP on
loopback): results equal the library's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neardup.index import LSHIndex
from tests.integration.conftest import run
from tests.service.conftest import App, Server, serve_here

BASE = "the licence grants every person a perpetual worldwide royalty free right to use the work"


def test_add_query_get_check_delete(server: App, licenses: list[dict[str, object]]) -> None:
    docs = [
        {"id": str(r["id"]), "text": str(r["text"]), "metadata": {"n": i}}
        for i, r in enumerate(licenses[:120])
    ]
    with server.client() as http:
        for start in range(0, len(docs), 40):
            response = http.post("/v1/documents", json={"documents": docs[start : start + 40]})
            assert response.status_code == 201, response.text
            assert response.json() == {"added": len(docs[start : start + 40])}
        assert http.get("/v1/info").json()["documents"] == 120
        got = http.get(f"/v1/documents/{docs[3]['id']}").json()
        assert got["id"] == docs[3]["id"]
        assert got["metadata"] == {"n": 3}
        queries = [d["text"] for d in docs[:30]]
        answer = http.post("/v1/query", json={"texts": queries, "k": 3}).json()["results"]
        # the field's name before, read for one version
        assert (
            http.post("/v1/query", json={"texts": queries, "top_k": 3}).json()["results"] == answer
        )
        with LSHIndex.open(server.index_path) as library:
            expected = library.query(queries, k=3)
        assert [[(m["id"], m["similarity"]) for m in r["matches"]] for r in answer] == [
            [(m.id, m.similarity) for m in ms] for ms in expected
        ]
        check = http.post(
            "/v1/check",
            json={
                "documents": [
                    {"id": "new-1", "text": docs[5]["text"]},
                    {"id": "new-2", "text": BASE},
                ]
            },
        )
        assert check.status_code == 200
        results = check.json()["results"]
        assert [r["inserted"] for r in results] == [False, True]
        assert results[0]["matches"][0]["similarity"] == 1.0
        assert http.delete("/v1/documents/new-2").json() == {"deleted": "new-2"}
        assert http.delete("/v1/documents/new-2").status_code == 404
        assert http.get("/v1/documents/new-2").status_code == 404


def test_writes_need_a_token_and_reads_are_open(server: App) -> None:
    body = {"documents": [{"id": "a", "text": BASE}]}
    with server.client(token=None) as anonymous, server.client(token="wrong") as wrong:
        for http in (anonymous, wrong):
            for response in (
                http.post("/v1/documents", json=body),
                http.post("/v1/check", json=body),
                http.delete("/v1/documents/a"),
            ):
                assert response.status_code == 401
                assert response.json()["error"]["code"] == "unauthorized"
                assert response.headers["WWW-Authenticate"] == "Bearer"
        assert anonymous.post("/v1/query", json={"texts": [BASE]}).status_code == 200
        assert anonymous.get("/v1/info").status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "code"),
    [
        ("post", "/v1/documents", b"{not json", 422, "invalid_request"),
        ("post", "/v1/documents", json.dumps({"documents": []}).encode(), 422, "invalid_request"),
        (
            "post",
            "/v1/documents",
            json.dumps({"documents": [{"id": 5, "text": "x"}]}).encode(),
            422,
            "invalid_request",
        ),
        (
            "post",
            "/v1/documents",
            json.dumps({"documents": [{"id": "", "text": "x"}]}).encode(),
            422,
            "invalid_request",
        ),
        (
            "post",
            "/v1/documents",
            json.dumps({"documents": [{"id": "x"}]}).encode(),
            422,
            "invalid_request",
        ),
        (
            "post",
            "/v1/documents",
            json.dumps({"documents": [{"id": f"d{i}", "text": "t"} for i in range(51)]}).encode(),
            413,
            "too_large",
        ),
        (
            "post",
            "/v1/documents",
            json.dumps({"documents": [{"id": "big", "text": "x" * 2_000_000}]}).encode(),
            413,
            "too_large",
        ),
        (
            "post",
            "/v1/documents",
            json.dumps(
                {"documents": [{"id": "d", "text": "t"}, {"id": "d", "text": "t"}]}
            ).encode(),
            400,
            "bad_request",
        ),
        (
            "post",
            "/v1/query",
            json.dumps({"texts": ["a"], "k": 0}).encode(),
            422,
            "invalid_request",
        ),
        (
            "post",
            "/v1/query",
            json.dumps({"texts": ["a"], "threshold": 2}).encode(),
            422,
            "invalid_request",
        ),
        ("post", "/v1/query", json.dumps({}).encode(), 422, "invalid_request"),
        ("post", "/v1/query", b"[1, 2]", 422, "invalid_request"),
        ("get", "/v1/nowhere", None, 404, "not_found"),
        ("put", "/v1/info", None, 405, "method_not_allowed"),
    ],
)
def test_bad_requests_get_a_4xx_with_a_json_body(
    shared_server: App, method: str, path: str, body: bytes | None, status: int, code: str
) -> None:
    with shared_server.client() as http:
        response = http.request(
            method, path, content=body, headers={"Content-Type": "application/json"}
        )
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert response.json()["error"]["message"]


@pytest.mark.service
def test_a_streamed_oversized_body_is_refused(shared_real_server: Server) -> None:
    def chunks():  # no Content-Length: the limit must hold on the bytes actually sent
        yield b'{"documents": [{"id": "x", "text": "'
        for _ in range(40):
            yield b"y" * 50_000
        yield b'"}]}'

    with shared_real_server.client() as http:
        response = http.post(
            "/v1/documents", content=chunks(), headers={"Content-Type": "application/json"}
        )
    assert response.status_code == 413


def test_an_existing_id_is_a_conflict_and_upsert_replaces(server: App) -> None:
    with server.client() as http:
        assert (
            http.post("/v1/documents", json={"documents": [{"id": "a", "text": BASE}]}).status_code
            == 201
        )
        again = http.post("/v1/documents", json={"documents": [{"id": "a", "text": BASE}]})
        assert again.status_code == 409
        assert again.json()["error"]["code"] == "conflict"
        replaced = http.post(
            "/v1/documents",
            json={"documents": [{"id": "a", "text": "other words entirely now"}], "upsert": True},
        )
        assert replaced.status_code == 201
        assert http.post("/v1/query", json={"texts": [BASE]}).json()["results"][0]["matches"] == []


def test_openapi_document_lists_the_api(server: App) -> None:
    with server.client() as http:
        paths = http.get("/openapi.json").json()["paths"]
    assert {
        "/v1/documents",
        "/v1/query",
        "/v1/check",
        "/v1/documents/{doc_id}",
        "/v1/info",
        "/healthz",
    } <= set(paths)


def test_containment_queries_find_the_documents_holding_a_text(tmp_path: Path) -> None:
    path = tmp_path / "contain.ndx"
    assert run("index", "create", str(path), "--containment-sample", "1").returncode == 0
    host = f"{BASE} and a long preamble about other matters entirely, then {BASE} again"
    with serve_here(path) as app, app.client() as http:
        docs = [{"id": "host", "text": host}, {"id": "other", "text": "nothing of it at all here"}]
        assert http.post("/v1/documents", json={"documents": docs}).status_code == 201
        body = {"texts": [BASE], "measure": "containment"}
        (result,) = http.post("/v1/query", json=body).json()["results"]
        assert result["matches"] == [{"id": "host", "similarity": 1.0}]
        plain = http.post("/v1/query", json={"texts": [BASE]}).json()["results"][0]["matches"]
        assert plain == []  # Jaccard: the host is about three times as long
    with serve_here(tmp_path / "plain.ndx") as app, app.client() as http:
        refused = http.post("/v1/query", json={"texts": [BASE], "measure": "containment"})
        assert refused.status_code == 400
        assert "keeps no containment sample" in refused.json()["error"]["message"]


def test_a_psm_simhash_index_is_served_with_distances(
    tmp_path: Path, licenses: list[dict[str, object]]
) -> None:
    """``neardup serve`` over ``index create --method simhash --search psm``: adds, queries and
    checks answer with the bits apart, and the flip model fitted on the first large batch."""
    path = tmp_path / "psm.ndx"
    created = run("index", "create", str(path), "--method", "simhash", "--search", "psm",
                  "--hamming", "3", "--psm-budget", "8")  # fmt: skip
    assert created.returncode == 0, created.stderr
    docs = [{"id": str(r["id"]), "text": str(r["text"])} for r in licenses[:1200]]
    with serve_here(path, max_batch=2000, max_body_mb=64) as app, app.client() as http:
        assert http.post("/v1/documents", json={"documents": docs}).status_code == 201
        (result,) = http.post("/v1/query", json={"texts": [docs[7]["text"]]}).json()["results"]
        assert result["matches"][0] == {"id": docs[7]["id"], "similarity": 1.0, "distance": 0}
        asked = {"texts": [docs[7]["text"]], "measure": "cosine"}
        assert http.post("/v1/query", json=asked).json()["results"] == [result]
        refused = http.post("/v1/query", json={**asked, "measure": "jaccard"})
        assert refused.status_code == 400
        assert "this index measures cosine" in refused.json()["error"]["message"]
        checked = http.post("/v1/check", json={"documents": [{"id": "x", "text": docs[9]["text"]}]})
        (answer,) = checked.json()["results"]
        assert not answer["inserted"]
        assert answer["matches"][0]["distance"] == 0
    with LSHIndex.open(path, create=False) as index:
        assert index.flips is not None
        assert len(index) == 1200
