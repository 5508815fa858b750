"""The worker's HTTP side, served by Faust's web server: metrics, health, the live page, explain, check.

``GET /metrics`` (Prometheus), ``GET /healthz``, ``GET /`` (the live page, shipped in the
package as ``page.html``) polling ``GET /stats``, ``GET /explain/{id}`` and ``POST /check``.
Every error is a JSON object with an ``error`` field and a 4xx or 5xx status, never a
traceback, and no request can stop the worker (:func:`_json_errors`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from importlib import resources
from typing import Any, ClassVar

import faust
from aiohttp import web as aioweb
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestHandler, RequestPayloadError
from aiohttp.web_request import BaseRequest
from faust.web import Request, Response, View
from faust.web.drivers.aiohttp import Web as AiohttpWeb

from topology import codec
from topology.validate import InvalidEvent, json_type
from worker.settings import Settings
from worker.stream.inspect import Inspector
from worker.stream.metrics import Metrics, exposition
from worker.stream.peers import PeerError
from worker.stream.stats import Sampler

log = logging.getLogger("neardup.worker")

# Largest request body aiohttp reads (a /check of a text at the size limit, JSON-escaped,
# with room to spare); a larger one is answered 413 before it is read.
MAX_BODY = 16 << 20
# Longest a request body may take to arrive; without a bound a client that sent its headers
# and stalled kept its request open as long as it liked.
BODY_READ_S = 30.0


class _JsonParseErrors(RequestHandler):
    """aiohttp's protocol of one connection, whose answer to a request it cannot parse at all
    (an unknown method, a header line over 8 KiB, a broken chunked body) is a JSON error like
    every other answer, not aiohttp's plain text. Those requests never reach a handler or a
    middleware, and aiohttp offers no setting for their answer: only this method makes it."""

    __slots__ = ()

    def handle_error(
        self, request: BaseRequest, status: int = 500, exc: BaseException | None = None, message: str | None = None
    ) -> aioweb.StreamResponse:
        if status >= 500:
            super().handle_error(request, status, exc, message)  # logs the traceback of a bug
        elif request.writer.output_size > 0:
            raise ConnectionError("an answer was sent already: no room for an error")
        else:  # a client's mistake: one line, not aiohttp's traceback
            log.info("web: a request that could not be parsed, answered %d: %s", status, message)
        reason = HTTPStatus(status).phrase
        # aiohttp's message points at the fault on lines of their own ("…:\n\n  b'FOO / HTTP/1.1'\n     ^").
        said = " ".join(line.strip() for line in (message or "").splitlines() if line.strip(" ^"))
        response = aioweb.json_response({"error": f"{reason}: {said}" if said else reason}, status=status)
        response.force_close()
        return response


class _JsonErrorServer(aioweb.Server):
    """aiohttp's server, whose connections are :class:`_JsonParseErrors`."""

    def __call__(self) -> RequestHandler:
        handler = super().__call__()
        handler.__class__ = _JsonParseErrors  # same slots: aiohttp builds it, we answer its errors
        return handler


class _Runner(aioweb.AppRunner):
    """Faust's runner of the web app, serving it through :class:`_JsonErrorServer`."""

    async def _make_server(self) -> aioweb.Server:
        server = await super()._make_server()
        server.__class__ = _JsonErrorServer  # the app's server as aiohttp made it, one method more
        return server


class _Web(AiohttpWeb):
    """Faust's aiohttp server without its index view (``/`` is our live page), whose requests
    that aiohttp cannot parse get a JSON error too (:class:`_JsonParseErrors`)."""

    production_blueprints: ClassVar[list[Any]] = []

    def __init__(self, app: faust.App, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self._runner = _Runner(self.web_app, access_log=None)


class App(faust.App):
    """A Faust app whose web server serves neardup's pages."""

    def _new_web(self) -> AiohttpWeb:
        return _Web(self)


def page_html() -> str:
    return resources.files("worker.stream").joinpath("page.html").read_text(encoding="utf-8")


def install_web(app: faust.App, settings: Settings, metrics: Metrics, sampler: Sampler, inspector: Inspector) -> None:
    """Declare the endpoints on ``app``'s web server (call before the worker starts)."""

    @app.page("/")
    async def live_page(self: View, request: Request) -> Response:
        return self.html(page_html())

    @app.page("/metrics")
    async def prometheus(self: View, request: Request) -> Response:
        body, content_type = exposition(metrics)
        return self.bytes(body, content_type=content_type.split(";")[0])

    @app.page("/healthz")
    async def health(self: View, request: Request) -> Response:
        healthy, status = sampler.health()
        return self.json({"healthy": healthy, "status": status}, status=200 if healthy else 503)

    @app.page("/stats")
    async def stats(self: View, request: Request) -> Response:
        return self.json(await sampler.stats())

    @app.page("/explain/{event_id}")
    async def explain(self: View, request: Request, event_id: str) -> Response:
        if len(event_id) > settings.max_id_chars:  # no event can have it: a wrong request, not an unknown id
            return self.error(400, f"id is {len(event_id)} characters, over the limit of {settings.max_id_chars}")
        if _local(request):
            found = inspector.local_record(event_id)
        else:
            found = await inspector.explain(event_id)
        if found is None:
            return self.error(
                404, f"no event with id {event_id!r} is known (never seen, past retention, or dead-lettered)"
            )
        return self.json(found)

    class Check(View):
        async def post(self, request: Request) -> Response:
            body = await _json_body(request)
            if _local(request):
                probes = body.get("probes")
                if not isinstance(probes, list):
                    return self.error(400, "field 'probes' must be a list")
                try:
                    return self.json(inspector.local_check(probes))
                except (KeyError, TypeError, ValueError) as exc:  # what another worker sent is not a probe
                    return self.error(400, f"unreadable probes: {type(exc).__name__} {exc}")
            text = body.get("text")
            if "text" not in body:  # as scan and the stream say it of an event without one
                return self.error(400, "missing field 'text'")
            if not isinstance(text, str):
                return self.error(400, f"field 'text' must be a string, got {json_type(text)}")
            if not text:
                return self.error(400, "field 'text' is empty")
            size = len(text.encode("utf-8", "surrogatepass"))
            if size > settings.max_text_bytes:
                return self.error(413, f"field 'text' is {size} bytes, over the limit of {settings.max_text_bytes}")
            event_id = body.get("id")
            if event_id is not None and not isinstance(event_id, str):
                return self.error(400, f"field 'id' must be a string, got {json_type(event_id)}")
            try:
                return self.json(await inspector.check(text, body.get("ts"), event_id))
            except InvalidEvent as exc:
                return self.error(400, exc.reason)

    app.page("/check")(Check)


def _local(request: Request) -> bool:
    return request.query.get("local") in ("1", "true")


class _BadRequest(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


async def _json_body(request: Request) -> dict[str, Any]:
    size = request.headers.get("Content-Length", "")
    if size.isdigit() and int(size) > MAX_BODY:  # said at once, not after waiting for a body never sent
        raise _BadRequest(413, f"request body of {size} bytes is over the limit of {MAX_BODY}")
    try:
        async with asyncio.timeout(BODY_READ_S):  # a client that stalls mid-body holds nothing for long
            raw = await request.read()
    except TimeoutError:
        raise _BadRequest(408, f"request body not received within {BODY_READ_S:g} s") from None
    except (RequestPayloadError, HttpProcessingError) as exc:  # a body its Content-Encoding does not fit
        raise _BadRequest(400, f"request body could not be read: {exc}") from None
    try:
        body = codec.loads(raw)  # as strict as the stream's parser: no NaN, no number out of range
    except ValueError:
        raise _BadRequest(400, _not_json(raw)) from None
    except RecursionError:
        raise _BadRequest(400, "request body is nested too deeply to read") from None
    if not isinstance(body, dict):
        raise _BadRequest(400, f"request body must be a JSON object, got {json_type(body)}")
    return body


def _not_json(raw: bytes) -> str:
    """Why a body is not JSON: msgspec calls a lone surrogate "truncated" input; the standard
    parser, asked only on this path, tells which it is and where."""
    try:
        json.loads(raw)
    except (ValueError, RecursionError) as exc:
        return f"request body is not JSON: {exc}"
    return "request body holds a lone surrogate (invalid Unicode)"


Handler = Callable[[aioweb.Request], Awaitable[aioweb.StreamResponse]]


@aioweb.middleware
async def _json_errors(request: aioweb.Request, handler: Handler) -> aioweb.StreamResponse:
    """Every failure as a JSON error: unknown paths and methods, bad bodies, unreachable peers, bugs."""
    try:
        return await handler(request)
    except aioweb.HTTPMethodNotAllowed as exc:  # "GET /check": say what the path takes
        allowed = sorted(exc.allowed_methods)
        named = ", ".join(m for m in allowed if m != "HEAD")  # Faust routes a HEAD beside each view's methods
        reason = f"{exc.method} is not allowed on {request.path}: it takes {named}"
        return aioweb.json_response({"error": reason}, status=exc.status, headers={"Allow": ", ".join(allowed)})
    except aioweb.HTTPNotFound:
        return aioweb.json_response({"error": _not_found(request.path)}, status=404)
    except aioweb.HTTPException as exc:
        if exc.status < 400:
            raise
        return aioweb.json_response({"error": exc.reason}, status=exc.status)
    except (_BadRequest, PeerError) as exc:
        return aioweb.json_response({"error": exc.reason}, status=exc.status)
    except ConnectionResetError:  # the client went away mid-request: nobody reads an answer, nothing to fix
        log.debug("web: %s %s: the client closed the connection", request.method, request.path)
        return aioweb.json_response({"error": "the client closed the connection"}, status=400)
    except Exception as exc:  # a request never stops the worker, nor shows it a traceback
        log.exception("web: %s %s failed", request.method, request.path)
        return aioweb.json_response({"error": f"internal error: {type(exc).__name__}"}, status=500)


def _not_found(path: str) -> str:
    """What a path no route takes should have been ("/explain/" lacks its id)."""
    if path.rstrip("/") == "/explain":
        return "give an event id: GET /explain/ID"
    return f"no such path: {path} (the worker serves GET /, /stats, /metrics, /healthz, /explain/ID and POST /check)"


def init_server(app: faust.App) -> None:
    """Apply the routes and the error middleware; Faust's own CLI does this for its worker command."""
    web: Any = app.web
    web.web_app.middlewares.append(_json_errors)
    web.init_server()
