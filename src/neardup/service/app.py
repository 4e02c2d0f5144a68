"""The HTTP service over an index file: a JSON API built with FastAPI.

It serves an :class:`~neardup.index.LSHIndex` (documents are texts) or a
:class:`~neardup.index.VectorIndex` (documents are vectors), as
:func:`~neardup.index.open_index` opens the file: the same routes, whose bodies carry
``text`` or ``vector`` by the index's kind (a vector index has no ``/v1/check``).

Every write needs a bearer token; reads are open unless ``auth_reads`` (the OpenAPI document
marks exactly the routes that need one). Every error is a JSON body
``{"error": {"code": ..., "message": ...}}``: bad input gets a 4xx answer, a damaged or locked
index file a 503, never a plain-text 500. Request bodies are strict: an unknown field or a value
of the wrong type (``"upsert": "yes"``) is refused with 422 naming the field. Document ids are
any non-empty Unicode string: in a URL path (``/v1/documents/{id}``) they are percent-encoded,
every byte outside ``A-Z a-z 0-9 - . _ ~`` (``/`` included), and decoded exactly once.
``/docs`` is a page rendered here from the OpenAPI document, with no external assets, so it
works offline. Requests run in a thread pool: over an LSH index readers run concurrently
(each thread has its own SQLite connection) and writers are serialized by the store; a vector
index answers one request at a time (its tables are in memory).
"""

from __future__ import annotations

import hmac
import html
import json
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neardup._version import __version__
from neardup.errors import (
    IdExistsError,
    InputError,
    MissingExtraError,
    NeardupError,
    ParameterError,
)
from neardup.index import LSHIndex, VectorIndex, threshold_warning
from neardup.index.lsh_index import QueryMeasure

try:
    from fastapi import Depends, FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.params import Depends as DependsParam
    from fastapi.responses import HTMLResponse, JSONResponse
    from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
    from pydantic import AliasChoices, BaseModel, ConfigDict, Field
    from starlette.convertors import Convertor, register_url_convertor
    from starlette.exceptions import HTTPException
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingExtraError(
        "the HTTP service needs FastAPI and uvicorn: pip install 'neardup[service]'"
    ) from exc

__all__ = ["ServedIndex", "ServiceSettings", "create_app"]

ServedIndex = LSHIndex | VectorIndex
"""What the service serves: an index of texts or of vectors."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class _AnyTextConvertor(Convertor[str]):
    """A path parameter that takes the rest of the path, newlines and slashes included.

    Starlette's ``path`` convertor is ``.*``, which stops at a newline (``%0A`` in an id).
    """

    regex = r"[\s\S]*"

    def convert(self, value: str) -> str:
        """The decoded path text, as is."""
        return value

    def to_string(self, value: str) -> str:
        """The text, as is."""
        return value


register_url_convertor("anytext", _AnyTextConvertor())


@dataclass(frozen=True, slots=True)
class ServiceSettings:
    """Limits and authentication of the service.

    Attributes
    ----------
    tokens
        Accepted bearer tokens; empty means no authentication at all (trusted networks only).
    auth_reads
        Require a token for reads too.
    max_batch
        Documents (or queries) per request, at least 1.
    max_body_bytes
        Bytes per request body, at least 1; larger requests get 413.
    """

    tokens: frozenset[str] = field(default_factory=frozenset)
    auth_reads: bool = False
    max_batch: int = 1000
    max_body_bytes: int = 16 * 2**20

    def __post_init__(self) -> None:
        """Refuse limits that would refuse every request."""
        for name in ("max_batch", "max_body_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ParameterError(f"ServiceSettings.{name} must be an int >= 1; got {value!r}.")
        if self.auth_reads and not self.tokens:
            raise ParameterError("ServiceSettings.auth_reads needs tokens; got none.")


class _Strict(BaseModel):
    """A request body: unknown fields are errors, and no value is coerced to another type."""

    model_config = ConfigDict(extra="forbid", strict=True)


class Document(_Strict):
    """One document to add or check."""

    id: str = Field(min_length=1, max_length=1024)
    text: str
    metadata: Any = None


def _k() -> Any:
    """``k``: the k best matches of each query (``top_k``, its name before, read one version)."""
    return Field(default=None, ge=1, le=1000, validation_alias=AliasChoices("k", "top_k"))


class AddRequest(_Strict):
    """``POST /v1/documents``."""

    documents: list[Document] = Field(min_length=1)
    upsert: bool = False


class QueryRequest(_Strict):
    """``POST /v1/query``: texts (ids are their positions) or documents with ids."""

    texts: list[str] | None = None
    documents: list[Document] | None = None
    k: int | None = _k()
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    measure: QueryMeasure | None = None


class VectorDocument(_Strict):
    """One vector to add: integers for ``hamming`` (uint64 words) and ``l1`` (counts)."""

    id: str = Field(min_length=1, max_length=1024)
    vector: list[int] | list[float]
    metadata: Any = None


class VectorAddRequest(_Strict):
    """``POST /v1/documents`` of a vector index."""

    documents: list[VectorDocument] = Field(min_length=1)
    upsert: bool = False


class VectorQueryRequest(_Strict):
    """``POST /v1/query`` of a vector index: vectors (ids are their positions)."""

    vectors: list[list[int] | list[float]]
    k: int | None = _k()
    threshold: float | None = Field(default=None, allow_inf_nan=False)


class CheckRequest(_Strict):
    """``POST /v1/check``: insert each document unless the index holds a near-copy."""

    documents: list[Document] = Field(min_length=1)
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse(status_code=status, content={"error": {"code": code, "message": message}})


class BodyLimit:
    """ASGI middleware: refuse request bodies over ``limit`` bytes with 413, streamed or not.

    The body is read (up to the limit) before the application sees the request, then replayed.
    """

    def __init__(self, app: Callable[..., Awaitable[None]], limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_big = _error(413, "too_large", f"request body over the limit of {self.limit} bytes")
        declared = dict(scope.get("headers") or []).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.limit:
            await too_big(scope, receive, send)
            return
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            size += len(message.get("body", b""))
            if size > self.limit:
                await too_big(scope, receive, send)
                return
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
        replay = iter(messages)

        async def replayed() -> Message:
            return next(replay, None) or await receive()

        await self.app(scope, replayed, send)


def _authorizer(
    settings: ServiceSettings, bearer: HTTPBearer
) -> Callable[[HTTPAuthorizationCredentials | None], None]:
    """A dependency that refuses the request (401) without one of the service's tokens."""

    def check(
        credentials: HTTPAuthorizationCredentials | None = Depends(bearer),  # noqa: B008 - FastAPI
    ) -> None:
        token = credentials.credentials if credentials is not None else ""
        if not any(hmac.compare_digest(token, t) for t in settings.tokens):
            raise HTTPException(
                401, "a valid bearer token is required: Authorization: Bearer <token>"
            )

    return check


def create_app(index: ServedIndex, settings: ServiceSettings | None = None) -> Any:
    """The FastAPI application serving ``index`` (run it with uvicorn, or ``neardup serve``)."""
    settings = settings if settings is not None else ServiceSettings()
    # Load the compiled kernels now, so that the first requests do not wait for them.
    if isinstance(index, VectorIndex):
        index.query(np.zeros((1, index.width), dtype=index.dtype))
    else:
        index.query(["warm up the sketching kernels before the first request"])
    app = FastAPI(
        title="neardup",
        summary="Near-duplicate lookup over a persistent index of texts or vectors.",
        version=__version__,
        docs_url=None,  # FastAPI's pages load Swagger UI and ReDoc from a CDN: see /docs below
        redoc_url=None,
    )
    # Only the routes that need a token declare the bearer scheme (and so does OpenAPI).
    token: list[DependsParam] = []
    if settings.tokens:
        token = [Depends(_authorizer(settings, HTTPBearer(auto_error=False)))]
    _install_error_handlers(app)
    _install_reads(app, index, settings, token if settings.auth_reads else [])
    _install_writes(app, index, settings, token)

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        """The API described from its OpenAPI document, with no external assets."""
        return HTMLResponse(_docs_page(app.openapi()))

    return BodyLimit(app, settings.max_body_bytes)


def _limit_batch(settings: ServiceSettings, size: int) -> None:
    if size > settings.max_batch:
        raise HTTPException(413, f"batch of {size} exceeds the limit of {settings.max_batch}")


def _warned(index: LSHIndex, answer: dict[str, Any], threshold: float | None) -> dict[str, Any]:
    """``answer`` with a ``warning`` when ``threshold`` is below the index's own."""
    if threshold is not None and (text := threshold_warning(index.header, threshold)):
        answer["warning"] = text
    return answer


def _vector_rows(index: VectorIndex, vectors: list[list[int] | list[float]]) -> Any:
    """JSON vectors as the index's rows (a 400 for floats where integers are stored)."""
    integral = index.dtype.kind in "iu"
    if integral and not all(type(v) is int for vector in vectors for v in vector):
        raise InputError(
            f"a {index.spec.metric!r} index stores integers "
            f"({'uint64 words of bits' if index.spec.metric == 'hamming' else 'counts'}): "
            "send whole numbers"
        )
    try:
        rows = np.array(vectors, dtype=index.dtype if integral else np.float64)
    except OverflowError as exc:
        raise InputError(f"vectors: {exc}") from None
    except ValueError:
        raise InputError(f"vectors must be rows of {index.width} numbers each") from None
    return rows.reshape(0, index.width) if rows.size == 0 else rows


def _install_reads(
    app: FastAPI, index: ServedIndex, settings: ServiceSettings, access: list[DependsParam]
) -> None:
    """The routes that read: health, info, query, get."""

    @app.get("/healthz", tags=["service"])
    def healthz() -> dict[str, str]:
        """Liveness: the service answers."""
        return {"status": "ok"}

    @app.get("/v1/info", tags=["index"], dependencies=access)
    def info() -> dict[str, Any]:
        """The index's parameters, size and document count."""
        return index.info()

    if isinstance(index, VectorIndex):
        _install_vector_query(app, index, settings, access)
    else:
        _install_text_query(app, index, settings, access)

    # ``:anytext`` lets an id hold "/" (URLs are ids) and newlines; the path is percent-decoded
    # once, by the server.
    @app.get("/v1/documents/{doc_id:anytext}", tags=["index"], dependencies=access)
    def get(doc_id: str) -> dict[str, Any]:
        """What the index holds about one document (its id percent-encoded in the path).

        For texts ``{"id", "num_shingles", "metadata"}``; for vectors ``{"id", "vector",
        "metadata"}``.
        """
        doc = index.get(doc_id) if doc_id else None
        if doc is None:
            raise HTTPException(404, f"no document {doc_id!r}")
        return doc.to_dict()


def _install_vector_query(
    app: FastAPI, index: VectorIndex, settings: ServiceSettings, access: list[DependsParam]
) -> None:
    """``POST /v1/query`` of a vector index."""

    @app.post("/v1/query", tags=["index"], dependencies=access)
    def query(request: VectorQueryRequest) -> dict[str, Any]:
        """The stored vectors near each query vector, best first (then by id).

        ``threshold``: a cosine (at or above) or a distance (at or below), the index's by
        default; ``k`` alone: the best of the vectors met, however far. Each match has
        the exact ``similarity`` (cosine) or ``distance``.
        """
        _limit_batch(settings, len(request.vectors))
        rows = _vector_rows(index, request.vectors)
        found = index.query(rows, threshold=request.threshold, k=request.k)
        return {
            "results": [
                {"query": str(i), "matches": [m.to_dict() for m in matches]}
                for i, matches in enumerate(found)
            ]
        }


def _install_text_query(
    app: FastAPI, index: LSHIndex, settings: ServiceSettings, access: list[DependsParam]
) -> None:
    """``POST /v1/query`` of an index of texts."""

    @app.post("/v1/query", tags=["index"], dependencies=access)
    def query(request: QueryRequest) -> dict[str, Any]:
        """The near-copies of each text, best first.

        A text without a token matches nothing. A ``threshold`` below the index's adds a
        ``warning``: the index's LSH bands find only some of the pairs at that similarity.
        ``measure``: the index's own by default (``"jaccard"``, ``"cosine"`` for SimHash; another
        is refused with 400), or ``"containment"``: the documents that contain each text
        instead, by the share of its shingles they hold (an index with a containment sample;
        else 400).
        """
        if (request.texts is None) == (request.documents is None):
            raise HTTPException(422, "give either texts or documents")
        if request.documents is not None:
            names = [d.id for d in request.documents]
            texts = [d.text for d in request.documents]
        else:
            texts = list(request.texts or [])
            names = [str(i) for i in range(len(texts))]
        _limit_batch(settings, len(texts))
        found = index.query(
            texts, threshold=request.threshold, k=request.k, measure=request.measure
        )
        answer = {
            "results": [
                {
                    "query": name,
                    "matches": [m.to_dict() for m in matches],
                }
                for name, matches in zip(names, found, strict=True)
            ]
        }
        if request.measure == "containment":
            return answer
        return _warned(index, answer, request.threshold)


def _install_writes(
    app: FastAPI, index: ServedIndex, settings: ServiceSettings, access: list[DependsParam]
) -> None:
    """The routes that write: add, delete, and for texts check."""
    if isinstance(index, VectorIndex):
        _install_vector_add(app, index, settings, access)
    else:
        _install_text_writes(app, index, settings, access)

    @app.delete("/v1/documents/{doc_id:anytext}", tags=["index"], dependencies=access)
    def delete(doc_id: str) -> dict[str, str]:
        """Remove one document (its id percent-encoded in the path)."""
        if not doc_id or not index.delete([doc_id]):
            raise HTTPException(404, f"no document {doc_id!r}")
        return {"deleted": doc_id}


def _store(
    index: LSHIndex | VectorIndex,
    ids: list[str],
    items: Any,
    metadata: list[dict[str, Any] | None],
    *,
    upsert: bool,
) -> None:
    """Add a batch (an id already stored: a 409, nothing added), or upsert it."""
    if upsert:
        index.upsert(ids, items, metadata)
        return
    try:
        index.add(ids, items, metadata)
    except IdExistsError as exc:
        raise HTTPException(409, f'{exc}; send "upsert": true to replace them') from None


def _install_vector_add(
    app: FastAPI, index: VectorIndex, settings: ServiceSettings, access: list[DependsParam]
) -> None:
    """``POST /v1/documents`` of a vector index."""

    @app.post("/v1/documents", status_code=201, tags=["index"], dependencies=access)
    def add(request: VectorAddRequest) -> dict[str, Any]:
        """Add a batch of vectors in one transaction (all or none); ``upsert`` replaces.

        An id already in the index is a 409 conflict (nothing is added) unless ``"upsert":
        true``.
        """
        _limit_batch(settings, len(request.documents))
        ids = [d.id for d in request.documents]
        rows = _vector_rows(index, [d.vector for d in request.documents])
        metadata = [d.metadata for d in request.documents]
        _store(index, ids, rows, metadata, upsert=request.upsert)
        return {"added": len(ids)}


def _install_text_writes(
    app: FastAPI, index: LSHIndex, settings: ServiceSettings, access: list[DependsParam]
) -> None:
    """``POST /v1/documents`` and ``POST /v1/check`` of an index of texts."""

    @app.post("/v1/documents", status_code=201, tags=["index"], dependencies=access)
    def add(request: AddRequest) -> dict[str, Any]:
        """Add a batch of documents in one transaction (all or none); ``upsert`` replaces.

        An id already in the index is a 409 conflict (nothing is added) unless ``"upsert":
        true``.
        """
        _limit_batch(settings, len(request.documents))
        ids = [d.id for d in request.documents]
        texts = [d.text for d in request.documents]
        metadata = [d.metadata for d in request.documents]
        _store(index, ids, texts, metadata, upsert=request.upsert)
        return {"added": len(ids)}

    @app.post("/v1/check", tags=["index"], dependencies=access)
    def check(request: CheckRequest) -> dict[str, Any]:
        """Insert each document that has no near-copy, atomically for the batch."""
        _limit_batch(settings, len(request.documents))
        results = index.check(
            [d.id for d in request.documents],
            [d.text for d in request.documents],
            threshold=request.threshold,
            metadata=[d.metadata for d in request.documents],
        )
        answer = {
            "results": [
                {
                    "id": r.id,
                    "inserted": r.inserted,
                    "matches": [m.to_dict() for m in r.matches],
                }
                for r in results
            ]
        }
        return _warned(index, answer, request.threshold)


def _install_error_handlers(app: FastAPI) -> None:
    """Every error becomes a JSON body ``{"error": {"code", "message"}}``."""

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        codes = {
            401: "unauthorized",
            404: "not_found",
            405: "method_not_allowed",
            409: "conflict",
            422: "invalid_request",
            413: "too_large",
        }
        response = _error(
            exc.status_code, codes.get(exc.status_code, "bad_request"), str(exc.detail)
        )
        if exc.status_code == 401:
            response.headers["WWW-Authenticate"] = "Bearer"
        return response

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(_problem(e) for e in exc.errors())
        return _error(422, "invalid_request", problems or "invalid request")

    @app.exception_handler(NeardupError)
    async def neardup_error(request: Request, exc: NeardupError) -> JSONResponse:
        if isinstance(exc, IdExistsError):
            return _error(409, "conflict", str(exc))
        if isinstance(exc, ParameterError | InputError):
            return _error(400, "bad_request", str(exc))
        return _error(503, "store_unavailable", str(exc))

    @app.exception_handler(Exception)
    async def failure(request: Request, exc: Exception) -> JSONResponse:
        # A bug, not bad input: still JSON (the server log has the traceback).
        return _error(500, "internal_error", f"internal error: {type(exc).__name__}: {exc}")


def _problem(error: Any) -> str:
    """One validation error as ``body.field: what is wrong``."""
    where = ".".join(str(p) for p in error.get("loc", ()))
    if error.get("type") == "extra_forbidden":
        return f"{where}: unknown field"
    return f"{where}: {error.get('msg', '')}"


def _docs_page(spec: dict[str, Any]) -> str:
    """An HTML page describing the API, from its OpenAPI document; no script, no outside URL."""
    esc = html.escape
    rows, sections = [], []
    for path, methods in spec.get("paths", {}).items():
        for method, operation in methods.items():
            secured = bool(operation.get("security"))
            anchor = f"{method}-{path}".replace("/", "-").replace("{", "").replace("}", "")
            auth = "bearer token" if secured else "open"
            summary = esc(operation.get("summary", ""))
            rows.append(
                f'<tr><td><a href="#{esc(anchor)}">{method.upper()}</a></td>'
                f"<td><code>{esc(path)}</code></td><td>{auth}</td><td>{summary}</td></tr>"
            )
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            schema = (body or {}).get("schema", {}).get("$ref", "").rsplit("/", 1)[-1]
            sections.append(
                f'<h3 id="{esc(anchor)}">{method.upper()} <code>{esc(path)}</code></h3>'
                f"<p>{esc(operation.get('description', operation.get('summary', '')))}</p>"
                f"<p>Authentication: {auth}."
                + (f' Body: <a href="#schema-{esc(schema)}">{esc(schema)}</a>.' if schema else "")
                + f" Answers: {esc(', '.join(operation.get('responses', {})))}.</p>"
            )
    schemas = [
        f'<h3 id="schema-{esc(name)}">{esc(name)}</h3>'
        f"<pre>{esc(json.dumps(schema, indent=2))}</pre>"
        for name, schema in spec.get("components", {}).get("schemas", {}).items()
    ]
    info = spec.get("info", {})
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{esc(info.get("title", ""))} API</title>
<style>
body {{ font-family: sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #ccc; padding: .3rem .6rem; }}
pre {{ background: #f4f4f4; padding: .6rem; overflow-x: auto; }}
</style></head><body>
<h1>{esc(info.get("title", ""))} {esc(info.get("version", ""))}</h1>
<p>{esc(info.get("summary", ""))} The machine-readable description is
<a href="openapi.json">openapi.json</a> (OpenAPI {esc(spec.get("openapi", ""))}). Routes marked
"bearer token" need <code>Authorization: Bearer &lt;token&gt;</code>. Ids in a path are
percent-encoded, every byte outside <code>A-Z a-z 0-9 - . _ ~</code> (so <code>/</code> is
<code>%2F</code>).</p>
<h2>Routes</h2>
<table><tr><th>method</th><th>path</th><th>auth</th><th>what</th></tr>
{"".join(rows)}
</table>
{"".join(sections)}
<h2>Request bodies</h2>
{"".join(schemas)}
</body></html>
"""
