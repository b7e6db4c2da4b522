"""POST a JSON body to a model API and get JSON back: standard library only.

The lab uses `urllib` on purpose, so the raw shapes each API takes stay in
plain view. Each attempt runs on a worker thread with a socket timeout (a
stalled response ends there); 429 and 5xx answers are retried with backoff,
honouring `retry-after`; everything else becomes a one-line `ModelApiError`.
"""

from __future__ import annotations

import json
import re
import socket
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Tuple

import anyio

from .errors import ModelApiError

Json = Dict[str, Any]
MAX_BACKOFF = 20.0


@dataclass(frozen=True)
class HttpSettings:
    timeout: float = 60.0  # seconds without a byte before an attempt gives up
    retries: int = 3
    backoff: float = 1.0  # first pause; doubles per retry unless retry-after says otherwise


@dataclass(frozen=True)
class Endpoint:
    url: str
    headers: Mapping[str, str]
    service: str  # "Anthropic API", "OpenAI-compatible API at ..."
    key_hint: str  # what to check when the key is refused
    model: str


def _post(url: str, payload: bytes, headers: Mapping[str, str], timeout: float) -> Tuple[int, Dict[str, str], bytes]:
    # Imported here: urllib and http.client cost every start of the client (and of
    # every self-check) some 20 ms, and only a real model's calls need them.
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, data=payload, method="POST",
                                     headers={"content-type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (URL from config)
            return response.status, dict(response.headers.items()), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers.items()) if exc.headers else {}, exc.read()


async def post_json(endpoint: Endpoint, body: Json, settings: HttpSettings = HttpSettings()) -> Json:
    payload = json.dumps(body).encode("utf-8")  # encoded once, whatever the retries
    for attempt in range(settings.retries + 1):
        try:
            status, headers, data = await anyio.to_thread.run_sync(
                _post, endpoint.url, payload, endpoint.headers, settings.timeout, abandon_on_cancel=True)
        except (socket.timeout, TimeoutError):
            raise ModelApiError(f"{endpoint.service}: no response within {settings.timeout:g} s "
                                f"({endpoint.url})") from None
        except OSError as exc:  # urllib's URLError is one
            why = getattr(exc, "reason", exc)
            raise ModelApiError(f"{endpoint.service}: cannot reach {endpoint.url}: {why}") from None
        if 200 <= status < 300:
            try:
                answer = json.loads(data)
            except ValueError:
                raise ModelApiError(f"{endpoint.service}: the reply is not JSON: {data[:120]!r}") from None
            if not isinstance(answer, dict):
                raise ModelApiError(f"{endpoint.service}: the reply is not a JSON object")
            return answer
        if (status == 429 or status >= 500) and attempt < settings.retries:
            await anyio.sleep(pause(headers, settings.backoff * 2 ** attempt))
            continue
        raise ModelApiError(describe_failure(endpoint, status, data, body))
    raise AssertionError("unreachable")  # pragma: no cover


def pause(headers: Mapping[str, str], fallback: float) -> float:
    """Seconds to wait before retrying: `retry-after` when given (capped)."""
    for key, value in headers.items():
        if key.lower() == "retry-after":
            try:
                return min(max(float(value), 0.0), MAX_BACKOFF)
            except ValueError:
                break  # an HTTP date: fall back to our own backoff
    return min(fallback, MAX_BACKOFF)


def error_message(data: bytes) -> Tuple[str, Optional[str]]:
    """(message, param) from either API's error body, best effort."""
    try:
        body = json.loads(data)
    except ValueError:
        return data[:200].decode("utf-8", "replace").strip(), None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        param = error.get("param")
        return str(error.get("message", error)), param if isinstance(param, str) else None
    return str(error or body)[:200], None


_TOOL_INDEX = re.compile(r"tools(?:\.|\[)(\d+)")


def describe_failure(endpoint: Endpoint, status: int, data: bytes, body: Json) -> str:
    message, param = error_message(data)
    service = endpoint.service
    if status in (401, 403):
        return f"{service}: the API key was refused (HTTP {status}); check {endpoint.key_hint}"
    if status == 404:
        return (f"{service}: not found (HTTP 404): unknown model {endpoint.model!r} or wrong "
                f"base URL ({endpoint.url}); {message}")
    if status == 400:
        where = _TOOL_INDEX.search(param or "") or _TOOL_INDEX.search(message)
        tools = body.get("tools")
        if where and isinstance(tools, list) and int(where.group(1)) < len(tools):
            tool = tools[int(where.group(1))]
            name = tool.get("name") or tool.get("function", {}).get("name")
            return f"{service}: the API rejected tool {name!r} ({param or where.group(0)}): {message}"
        field = f" (field {param})" if param else ""
        return f"{service}: the API rejected the request{field}: {message}"
    return f"{service}: HTTP {status}: {message}"
