"""The HTTP service over an :class:`~neardup.index.LSHIndex`: a JSON API built with FastAPI.

Every write needs a bearer token; reads are open unless ``auth_reads``. Bad input always gets
a 4xx answer with a JSON body ``{"error": {"code": ..., "message": ...}}``, never a 500.
Requests run in a thread pool: readers run concurrently (each thread has its own SQLite
connection) and writers are serialized by the store.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from neardup._version import __version__
from neardup.errors import (
    IdExistsError,
    IncompatibleError,
    MissingExtraError,
    NeardupError,
    ParameterError,
)
from neardup.index import LSHIndex

try:
    from fastapi import Depends, FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse
    from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
    from pydantic import BaseModel, Field
    from starlette.exceptions import HTTPException
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingExtraError(
        "the HTTP service needs FastAPI and uvicorn: pip install 'neardup[service]'"
    ) from exc

__all__ = ["ServiceSettings", "create_app"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


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
        Documents (or queries) per request.
    max_body_bytes
        Bytes per request body; larger requests get 413.
    """

    tokens: frozenset[str] = field(default_factory=frozenset)
    auth_reads: bool = False
    max_batch: int = 1000
    max_body_bytes: int = 16 * 2**20


class Document(BaseModel):
    """One document to add or check."""

    id: str = Field(min_length=1, max_length=1024)
    text: str
    metadata: Any = None


class AddRequest(BaseModel):
    """``POST /v1/documents``."""

    documents: list[Document] = Field(min_length=1)
    upsert: bool = False


class QueryRequest(BaseModel):
    """``POST /v1/query``: texts (ids are their positions) or documents with ids."""

    texts: list[str] | None = None
    documents: list[Document] | None = None
    top_k: int | None = Field(default=None, ge=1, le=1000)
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)


class CheckRequest(BaseModel):
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
    settings: ServiceSettings, bearer: HTTPBearer, *, required: bool
) -> Callable[[HTTPAuthorizationCredentials | None], None]:
    """A dependency that refuses the request (401) without one of the service's tokens."""

    def check(
        credentials: HTTPAuthorizationCredentials | None = Depends(bearer),  # noqa: B008 - FastAPI
    ) -> None:
        if not required or not settings.tokens:
            return
        token = credentials.credentials if credentials is not None else ""
        if not any(hmac.compare_digest(token, t) for t in settings.tokens):
            raise HTTPException(
                401, "a valid bearer token is required: Authorization: Bearer <token>"
            )

    return check


def create_app(index: LSHIndex, settings: ServiceSettings | None = None) -> Any:
    """The FastAPI application serving ``index`` (run it with uvicorn, or ``neardup serve``)."""
    settings = settings if settings is not None else ServiceSettings()
    # Load the compiled kernels now, so that the first requests do not wait for them.
    index.query(["warm up the sketching kernels before the first request"])
    app = FastAPI(
        title="neardup",
        summary="Near-duplicate lookup over a persistent LSH index.",
        version=__version__,
    )
    bearer = HTTPBearer(auto_error=False)
    write_access = Depends(_authorizer(settings, bearer, required=True))
    read_access = Depends(_authorizer(settings, bearer, required=settings.auth_reads))

    def limit_batch(size: int) -> None:
        if size > settings.max_batch:
            raise HTTPException(413, f"batch of {size} exceeds the limit of {settings.max_batch}")

    _install_error_handlers(app)

    @app.get("/healthz", tags=["service"])
    def healthz() -> dict[str, str]:
        """Liveness: the service answers."""
        return {"status": "ok"}

    @app.get("/v1/info", tags=["index"], dependencies=[read_access])
    def info() -> dict[str, Any]:
        """The index's parameters, size and document count."""
        return index.info()

    @app.post("/v1/documents", status_code=201, tags=["index"], dependencies=[write_access])
    def add(request: AddRequest) -> dict[str, Any]:
        """Add a batch of documents in one transaction (all or none); ``upsert`` replaces."""
        limit_batch(len(request.documents))
        ids = [d.id for d in request.documents]
        texts = [d.text for d in request.documents]
        metadata = [d.metadata for d in request.documents]
        (index.upsert if request.upsert else index.add)(ids, texts, metadata)
        return {"added": len(ids)}

    @app.post("/v1/query", tags=["index"], dependencies=[read_access])
    def query(request: QueryRequest) -> dict[str, Any]:
        """The near-copies of each text, best first."""
        if (request.texts is None) == (request.documents is None):
            raise HTTPException(422, "give either texts or documents")
        if request.documents is not None:
            names = [d.id for d in request.documents]
            texts = [d.text for d in request.documents]
        else:
            texts = list(request.texts or [])
            names = [str(i) for i in range(len(texts))]
        limit_batch(len(texts))
        found = index.query(texts, threshold=request.threshold, top_k=request.top_k)
        return {
            "results": [
                {
                    "query": name,
                    "matches": [{"id": m.id, "similarity": m.similarity} for m in matches],
                }
                for name, matches in zip(names, found, strict=True)
            ]
        }

    @app.post("/v1/check", tags=["index"], dependencies=[write_access])
    def check(request: CheckRequest) -> dict[str, Any]:
        """Insert each document that has no near-copy, atomically for the batch."""
        limit_batch(len(request.documents))
        results = index.check(
            [d.id for d in request.documents],
            [d.text for d in request.documents],
            threshold=request.threshold,
            metadata=[d.metadata for d in request.documents],
        )
        return {
            "results": [
                {
                    "id": r.id,
                    "inserted": r.inserted,
                    "matches": [{"id": m.id, "similarity": m.similarity} for m in r.matches],
                }
                for r in results
            ]
        }

    @app.get("/v1/documents/{doc_id}", tags=["index"], dependencies=[read_access])
    def get(doc_id: str) -> dict[str, Any]:
        """What the index holds about one document."""
        doc = index.get(doc_id)
        if doc is None:
            raise HTTPException(404, f"no document {doc_id!r}")
        return {"id": doc.id, "num_shingles": doc.num_shingles, "metadata": doc.metadata}

    @app.delete("/v1/documents/{doc_id}", tags=["index"], dependencies=[write_access])
    def delete(doc_id: str) -> dict[str, str]:
        """Remove one document."""
        if not index.delete([doc_id]):
            raise HTTPException(404, f"no document {doc_id!r}")
        return {"deleted": doc_id}

    return BodyLimit(app, settings.max_body_bytes)


def _install_error_handlers(app: FastAPI) -> None:
    """Every error becomes a JSON body ``{"error": {"code", "message"}}`` with a 4xx status."""

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
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', '')}"
            for e in exc.errors()
        )
        return _error(422, "invalid_request", problems or "invalid request")

    @app.exception_handler(NeardupError)
    async def neardup_error(request: Request, exc: NeardupError) -> JSONResponse:
        if isinstance(exc, IdExistsError):
            return _error(409, "conflict", str(exc))
        if isinstance(exc, ParameterError | IncompatibleError):
            return _error(400, "bad_request", str(exc))
        return _error(503, "store_unavailable", str(exc))
