"""The service's edges: ids of any Unicode in paths, strict request bodies, authentication as
declared in OpenAPI, offline docs, the start-up line, warnings, empty texts, and a damaged index
answered in JSON. Through the application in this process, and over real HTTP on loopback
(marked ``service``) where a socket or the command itself is what is tested."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup.index import recall_at
from tests.conftest import SAMPLE
from tests.integration.conftest import run
from tests.service.conftest import NEARDUP, TOKEN, App, Server, serve_here, start_server

TEXT = "the licence grants every person a perpetual worldwide royalty free right to use the work"


def path_of(doc_id: str) -> str:
    """``/v1/documents/{id}`` as a client must write it: the id percent-encoded as one segment,
    with the segments ``.`` and ``..`` encoded too (clients drop them from paths)."""
    encoded = quote(doc_id, safe="")
    return "/v1/documents/" + {".": "%2E", "..": "%2E%2E"}.get(encoded, encoded)


@pytest.fixture(scope="module")
def no_auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    """``neardup serve --no-auth``, in this process."""
    with serve_here(tmp_path_factory.mktemp("open") / "open.ndx", tokens=frozenset()) as app:
        yield app


@pytest.fixture(scope="module")
def auth_reads_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    """``neardup serve --auth-reads``, in this process."""
    with serve_here(tmp_path_factory.mktemp("closed") / "closed.ndx", auth_reads=True) as app:
        yield app


SPECIAL = st.sampled_from(["/", "?", "#", "%", " ", "%2F", "%25", ".", "..", "+", "&", "=", "\\"])
IDS = st.lists(st.one_of(SPECIAL, st.text(min_size=1, max_size=6)), min_size=1, max_size=6).map(
    "".join
)


def _round_trip(http: httpx.Client, doc_id: str) -> None:
    """Add, get, query and delete a document of id ``doc_id``."""
    text = f"{TEXT} for the id {doc_id!r}"
    added = http.post(
        "/v1/documents",
        json={"documents": [{"id": doc_id, "text": text, "metadata": [doc_id]}], "upsert": True},
    )
    assert added.status_code == 201, added.text
    got = http.get(path_of(doc_id))
    assert got.status_code == 200, (doc_id, got.text)
    assert got.json()["id"] == doc_id
    assert got.json()["metadata"] == [doc_id]
    found = http.post("/v1/query", json={"documents": [{"id": doc_id, "text": text}]})
    [result] = found.json()["results"]
    assert result["query"] == doc_id
    assert doc_id in [m["id"] for m in result["matches"]]
    deleted = http.delete(path_of(doc_id))
    assert deleted.status_code == 200, (doc_id, deleted.text)
    assert deleted.json() == {"deleted": doc_id}
    assert http.get(path_of(doc_id)).status_code == 404
    assert http.delete(path_of(doc_id)).status_code == 404


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(doc_id=IDS)
def test_any_unicode_id_round_trips_through_add_get_query_delete(
    shared_server: App, doc_id: str
) -> None:
    with shared_server.client() as http:
        _round_trip(http, doc_id)


@pytest.mark.service
@pytest.mark.slow
def test_ids_of_every_special_character_round_trip_over_a_real_socket(
    shared_real_server: App,
) -> None:
    """What a real HTTP server makes of the paths: every special character alone and inside a
    word, a URL, and ids of other scripts and of a newline."""
    specials = ["/", "?", "#", "%", " ", "%2F", "%25", ".", "..", "+", "&", "=", "\\"]
    ids = [*specials, *(f"a{c}b" for c in specials)]
    ids += ["https://example.org/a/b?page=2#top", "ünïcödé", "日本語/テキスト", "a\nb", "e\u0301"]
    with shared_real_server.client() as http:
        for doc_id in ids:
            _round_trip(http, doc_id)


def test_a_url_id_is_fetched_and_deleted_with_a_percent_encoded_slash(server: App) -> None:
    url = "https://example.org/a/b?page=2#top"
    with server.client() as http:
        body = {"documents": [{"id": url, "text": TEXT}, {"id": "a%2Fb", "text": "other words"}]}
        assert http.post("/v1/documents", json=body).status_code == 201
        assert http.get(path_of(url)).json()["id"] == url
        assert http.get(path_of("a%2Fb")).json()["id"] == "a%2Fb"  # decoded once, not twice
        assert http.get("/v1/documents/a%2Fb").json()["error"]["code"] == "not_found"  # a/b
        assert http.delete(path_of(url)).json() == {"deleted": url}


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/query", {"texts": ["a"], "topk": 3}, "body.topk: unknown field"),
        ("/v1/query", {"texts": ["a"], "k": "3"}, "body.k"),
        ("/v1/query", {"texts": ["a"], "k": 3.0}, "body.k"),
        ("/v1/query", {"texts": ["a"], "threshold": "0.5"}, "body.threshold"),
        ("/v1/query", {"texts": [1]}, "body.texts.0"),
        ("/v1/documents", {"documents": [{"id": "a", "text": "t"}], "upsert": "yes"}, "upsert"),
        ("/v1/documents", {"documents": [{"id": "a", "text": "t"}], "upsert": 1}, "body.upsert"),
        ("/v1/documents", {"documents": [{"id": "a", "text": "t"}], "upserts": True}, "upserts"),
        (
            "/v1/documents",
            {"documents": [{"id": "a", "text": "t", "meta": {}}]},
            "body.documents.0.meta: unknown field",
        ),
        ("/v1/check", {"documents": [{"id": "a", "text": "t"}], "treshold": 0.5}, "treshold"),
    ],
)
def test_unknown_fields_and_loose_types_are_refused_naming_the_field(
    shared_server: App, path: str, body: dict[str, object], field: str
) -> None:
    with shared_server.client() as http:
        response = http.post(path, json=body)
        assert response.status_code == 422, response.text
        assert response.json()["error"]["code"] == "invalid_request"
        assert field in response.json()["error"]["message"]
        assert http.get("/v1/documents/a").status_code == 404  # nothing was written


def test_a_conflict_names_the_json_field_that_replaces(server: App) -> None:
    with server.client() as http:
        body = {"documents": [{"id": "a", "text": TEXT}]}
        assert http.post("/v1/documents", json=body).status_code == 201
        again = http.post("/v1/documents", json=body)
        assert again.status_code == 409
        assert again.json()["error"]["message"] == (
            "1 id already in the index ('a'); nothing of this batch was added; "
            'send "upsert": true to replace them'
        )


READS = {("get", "/v1/info"), ("post", "/v1/query"), ("get", "/v1/documents/{doc_id}")}
WRITES = {("post", "/v1/documents"), ("post", "/v1/check"), ("delete", "/v1/documents/{doc_id}")}


def _secured(server: App) -> set[tuple[str, str]]:
    with server.client(token=None) as http:
        paths = http.get("/openapi.json").json()["paths"]
    return {
        (method, path)
        for path, methods in paths.items()
        for method, operation in methods.items()
        if operation.get("security")
    }


def test_openapi_marks_exactly_the_routes_that_need_a_token(
    shared_server: App, auth_reads_server: App, no_auth_server: App
) -> None:
    assert _secured(shared_server) == WRITES
    assert _secured(auth_reads_server) == WRITES | READS
    assert _secured(no_auth_server) == set()
    # What OpenAPI says is what the server does.
    with auth_reads_server.client(token=None) as anonymous:
        assert anonymous.get("/v1/info").status_code == 401
        assert anonymous.post("/v1/query", json={"texts": ["x"]}).status_code == 401
        assert anonymous.get("/healthz").status_code == 200
    with auth_reads_server.client() as http:
        assert http.get("/v1/info").status_code == 200
    with no_auth_server.client(token=None) as anonymous:
        body = {"documents": [{"id": "a", "text": TEXT}], "upsert": True}
        assert anonymous.post("/v1/documents", json=body).status_code == 201


def test_the_docs_page_needs_no_network(shared_server: App) -> None:
    with shared_server.client(token=None) as http:
        page = http.get("/docs")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        html = page.text
        assert re.findall(r"https?://|//[a-z]", html, flags=re.IGNORECASE) == []
        for url in re.findall(r"""(?:src|href|action)\s*=\s*["']?([^"'\s>]*)""", html):
            assert url.startswith("#") or url == "openapi.json", url
        assert "<script" not in html
        assert "@import" not in html
        assert "url(" not in html
        for method, path in READS | WRITES:
            assert f"{method.upper()}</a></td><td><code>{path}</code>" in html
        assert http.get("/openapi.json").status_code == 200  # the page's one link
        assert http.get("/redoc").status_code == 404  # the CDN pages are gone


@pytest.mark.service
@pytest.mark.slow
def test_the_start_up_line_says_where_what_and_whether_auth_is_on(
    shared_real_server: Server, tmp_path: Path
) -> None:
    open_server = start_server(tmp_path / "open.ndx", "--no-auth", tokens=None)
    closed_server = start_server(tmp_path / "closed.ndx", "--auth-reads")
    try:
        for running, auth in [
            (shared_real_server, "auth on: a bearer token for writes, reads open"),
            (closed_server, "auth on: a bearer token for writes and reads"),
            (open_server, "auth off (--no-auth)"),
        ]:
            lines = running.log.read_text().splitlines()
            assert lines[0] == (
                f"neardup serve: listening on {running.url} "
                f"(index {running.index_path}, {_count(lines[0])} documents; {auth})"
            )
    finally:
        open_server.stop()
        closed_server.stop()


def _count(line: str) -> str:
    match = re.search(r", ([\d,]+) documents;", line)
    assert match is not None, line
    return match[1]


@pytest.mark.service
def test_port_0_listens_on_a_free_port_and_says_which(tmp_path: Path) -> None:
    index = tmp_path / "x.ndx"
    assert run("index", "create", index).returncode == 0
    process = subprocess.Popen(
        [str(NEARDUP), "serve", str(index), "--port", "0", "--no-auth"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        match = re.fullmatch(r"neardup serve: listening on (http://127\.0\.0\.1:(\d+)) .*\n", line)
        assert match is not None, line
        assert int(match[2]) > 0
        assert httpx.get(f"{match[1]}/healthz", timeout=10).json() == {"status": "ok"}
    finally:
        process.terminate()
        process.communicate(timeout=30)


def test_a_threshold_below_the_index_s_adds_a_warning(server: App) -> None:
    with server.client() as http:
        body = {"documents": [{"id": "a", "text": TEXT}]}
        assert http.post("/v1/documents", json=body).status_code == 201
        header = http.get("/v1/info").json()["header"]
        low = http.post("/v1/query", json={"texts": [TEXT], "threshold": 0.5}).json()
        assert low["results"][0]["matches"][0]["id"] == "a"
        assert (
            f"similarity 0.5 with probability {recall_at(header, 0.5):.2f} only" in (low["warning"])
        )
        assert "neardup index create --threshold 0.5" in low["warning"]
        check = http.post(
            "/v1/check", json={"documents": [{"id": "b", "text": "new words"}], "threshold": 0.7}
        ).json()
        assert "similarity 0.7" in check["warning"]
        for answer in (
            http.post("/v1/query", json={"texts": [TEXT]}).json(),
            http.post("/v1/query", json={"texts": [TEXT], "threshold": 0.9}).json(),
        ):
            assert "warning" not in answer


def test_empty_texts_match_nothing(server: App) -> None:
    with server.client() as http:
        docs = [{"id": "e1", "text": ""}, {"id": "e2", "text": "  \n "}, {"id": "t", "text": TEXT}]
        assert http.post("/v1/documents", json={"documents": docs}).status_code == 201
        answer = http.post("/v1/query", json={"texts": ["", "\t", TEXT], "k": 5}).json()
        assert [[m["id"] for m in r["matches"]] for r in answer["results"]] == [[], [], ["t"]]
        check = http.post("/v1/check", json={"documents": [{"id": "e3", "text": ""}]}).json()
        assert check["results"] == [{"id": "e3", "inserted": True, "matches": []}]


@pytest.mark.service
def test_a_token_file_with_comments_and_spaces_authenticates(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(f"# the crawlers\n\n   {TOKEN}   \r\n# old: none\n  other-token\n")
    running = start_server(tmp_path / "x.ndx", "--token-file", str(tokens), tokens=None)
    try:
        body = {"documents": [{"id": "a", "text": TEXT}], "upsert": True}
        for token, status in [(TOKEN, 201), ("other-token", 201), ("# the crawlers", 401)]:
            with running.client(token=token) as http:
                assert http.post("/v1/documents", json=body).status_code == status
    finally:
        running.stop()


def test_a_damaged_index_answers_json_errors(tmp_path: Path) -> None:
    """The documents table's root page overwritten after the index was built: every answer is
    JSON, damage is a 503 naming the file and what to do, and the service stays up."""
    index = tmp_path / "damaged.ndx"
    assert run("index", "create", index).returncode == 0
    added = run("index", "add", index, SAMPLE)
    assert added.returncode == 0, added.stderr
    with closing(sqlite3.connect(index)) as conn:
        page = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'documents'")
        root = page.fetchone()[0]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    raw = bytearray(index.read_bytes())
    raw[(root - 1) * page_size : root * page_size] = b"\xa5" * page_size
    index.write_bytes(bytes(raw))
    with serve_here(index, max_batch=1000, max_body_mb=16) as running:  # serve's defaults
        with running.client() as http:
            licences = [json.loads(x) for x in _sample_lines(40)]
            responses = [
                http.get("/v1/info"),
                http.post("/v1/query", json={"texts": [r["text"] for r in licences[:20]]}),
                http.post("/v1/check", json={"documents": [{"id": "n", "text": TEXT}]}),
                http.post("/v1/documents", json={"documents": [{"id": "m", "text": TEXT}]}),
                *(http.get(path_of(r["id"])) for r in licences),
                *(http.delete(path_of(r["id"])) for r in licences[:5]),
            ]
            assert http.get("/healthz").status_code == 200
        damaged = 0
        for response in responses:
            assert response.headers["content-type"] == "application/json", response.text
            body = response.json()
            if response.status_code >= 400:
                assert response.status_code == 503, response.text
                assert body["error"]["code"] == "store_unavailable"
                message = body["error"]["message"]
                assert message.startswith(f"{index}: the index file is damaged"), message
                assert "restore it from a copy, or rebuild it" in message
                damaged += 1
        assert damaged >= 40


def _sample_lines(count: int) -> list[str]:
    import gzip

    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        return [line for _, line in zip(range(count), f, strict=False)]
