"""A small Python client of the fedscore scoring service, for silos of any FL stack.

Standard library plus ``cryptography`` (Debian: ``python3-cryptography``). It implements the
formats of docs/signing.md — request signing and signed score reports — and checks itself
against test/vectors/signing/signing.json (clients/python/test_vectors.py).

What a silo of a reports-only consortium (docs/networked.md, "Reports-only consortia") does::

    from fedscore_client import SiloClient, SiloKey

    key = SiloKey.generate()
    key.save("silo.key")                 # 64 hex digits, mode 0600, as `fedscore keygen`
    print(key.public_key_hex)            # the operator registers it in the consortium

    client = SiloClient("http://127.0.0.1:8080", "hospitals", silo=2, key=SiloKey.load("silo.key"))
    client.submit_report(round=1, singleton=0.81, complement=0.87)   # v(M0 + U_i), v(M − U_i)
    print(client.round_scores(1)["schemes"]["ee"])

Command line (``python3 -m fedscore_client --help``): ``keygen``, ``report``, ``scores``.
Errors of the service are raised as :class:`FedscoreError` with its code (docs/errors.md).

Answers are bounded (issue 27, A5): a body above ``max_bytes`` (default 16 MiB; 64 KiB for an
error answer) is refused as soon as it crosses the cap, a redirect is refused rather than
followed, each socket operation times out after ``timeout`` s and the whole answer after
``deadline`` s (a server dripping a byte at a time cannot hold the client), and JSON nested
deeper than 64 levels or malformed is one :class:`AnswerRefusedError` (a ``FedscoreError``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import secrets
import socket
import struct
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Optional, Sequence, Tuple

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

__all__ = [
    "AnswerRefusedError",
    "FedscoreError",
    "SiloClient",
    "SiloKey",
    "body_digest",
    "decode_report",
    "random_nonce",
    "request_signing_bytes",
    "sign_report",
    "sign_request",
    "verify_report",
    "verify_request",
]

REQUEST_TAG = b"fedscore/http-request/v1"
REPORT_TAG = b"fedscore/score-report/v1"
REPORT_MAGIC = b"FSR"
REPORT_VERSION = 1
NONCE_PATTERN = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")

SILO_HEADER = "x-fedscore-silo"
TIMESTAMP_HEADER = "x-fedscore-timestamp"
NONCE_HEADER = "x-fedscore-nonce"
SIGNATURE_HEADER = "x-fedscore-signature"
CONTENT_DIGEST_HEADER = "x-fedscore-content-sha256"

#: Answers retried with backoff: too many requests, and a proxy or service not answering for now.
RETRIED_STATUSES = (429, 502, 503, 504)
MAX_BACKOFF_S = 30.0
MAX_RETRY_AFTER_S = 120.0


# ── keys ────────────────────────────────────────────────────────────────────────────────────────


class SiloKey:
    """A silo's long-term Ed25519 key: the 32-byte RFC 8032 seed."""

    def __init__(self, seed: bytes):
        if not isinstance(seed, (bytes, bytearray)) or len(seed) != 32:
            raise ValueError("seed: expected 32 bytes")
        self._private = Ed25519PrivateKey.from_private_bytes(bytes(seed))

    @classmethod
    def generate(cls) -> "SiloKey":
        """A fresh key from the OS CSPRNG."""
        return cls(secrets.token_bytes(32))

    @classmethod
    def from_hex(cls, text: str) -> "SiloKey":
        """The key whose seed is 64 hex digits (surrounding white space ignored)."""
        text = text.strip()
        if not HEX64.match(text):
            raise ValueError("key: expected 64 hex digits (the file `fedscore keygen` writes)")
        return cls(bytes.fromhex(text))

    @classmethod
    def load(cls, path: str) -> "SiloKey":
        """Reads a key file of `fedscore keygen` (64 hex digits and a newline)."""
        with open(path, "r", encoding="ascii") as f:
            return cls.from_hex(f.read())

    def save(self, path: str) -> None:
        """Writes the key as `fedscore keygen` does: 64 hex digits + LF, mode 0600, never overwriting."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(self.seed_hex + "\n")

    @property
    def seed_hex(self) -> str:
        raw = self._private.private_bytes(
            serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
        )
        return raw.hex()

    @property
    def public_key(self) -> bytes:
        return self._private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)

    @property
    def public_key_hex(self) -> str:
        """The public key the operator registers (64 lower-case hex digits)."""
        return self.public_key.hex()

    def sign(self, message: bytes) -> bytes:
        """The deterministic Ed25519 signature (64 bytes) of `message`."""
        return self._private.sign(message)


def _verify(public_key: bytes, message: bytes, signature: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
        return True
    except (InvalidSignature, ValueError):
        return False


# ── request signing (docs/signing.md, "Signed requests") ──────────────────────────────────────


def body_digest(body: bytes = b"") -> str:
    """Lower-case hex SHA-256 of the request body (of zero bytes when there is none)."""
    return hashlib.sha256(body or b"").hexdigest()


def random_nonce() -> str:
    """A fresh nonce: 24 base64url characters (144 random bits)."""
    return secrets.token_urlsafe(18)


def request_signing_bytes(method: str, path: str, silo: int, timestamp: int, nonce: str, digest: str) -> bytes:
    """The bytes a silo signs: the tag and six fields, joined by LF, UTF-8."""
    fields = [REQUEST_TAG.decode(), method.upper(), path, str(int(silo)), str(int(timestamp)), nonce, digest]
    return "\n".join(fields).encode("utf-8")


def sign_request(
    key: SiloKey,
    method: str,
    path: str,
    silo: int,
    body: bytes = b"",
    timestamp: Optional[int] = None,
    nonce: Optional[str] = None,
) -> dict:
    """The five authentication headers of a silo request (path with its query, exactly as sent)."""
    if not isinstance(silo, int) or not 0 <= silo <= 254:
        raise ValueError("silo: expected an integer in [0, 254]")
    if not path.startswith("/"):
        raise ValueError("path: expected the request target, e.g. /v1/consortia/demo/rounds/1/reports")
    timestamp = int(time.time() * 1000) if timestamp is None else int(timestamp)
    nonce = random_nonce() if nonce is None else nonce
    if not NONCE_PATTERN.match(nonce):
        raise ValueError("nonce: expected 16–64 characters of [A-Za-z0-9_-]")
    digest = body_digest(body)
    signature = key.sign(request_signing_bytes(method, path, silo, timestamp, nonce, digest))
    return {
        SILO_HEADER: str(silo),
        TIMESTAMP_HEADER: str(timestamp),
        NONCE_HEADER: nonce,
        SIGNATURE_HEADER: signature.hex(),
        CONTENT_DIGEST_HEADER: digest,
    }


def verify_request(public_key_hex: str, method: str, path: str, headers: dict) -> bool:
    """Whether the headers' signature verifies under the key (the digest as declared)."""
    message = request_signing_bytes(
        method,
        path,
        int(headers[SILO_HEADER]),
        int(headers[TIMESTAMP_HEADER]),
        headers[NONCE_HEADER],
        headers.get(CONTENT_DIGEST_HEADER, body_digest()),
    )
    return _verify(bytes.fromhex(public_key_hex), message, bytes.fromhex(headers[SIGNATURE_HEADER]))


# ── signed score reports (docs/signing.md, "Signed score reports") ───────────────────────────


def _finite(name: str, x: Any) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise ValueError(f"{name}: expected a finite number, got {x!r}")
    return float(x)


def _report_body(
    session: str,
    round: int,
    silo: int,
    singleton: float,
    complement: float,
    per_class: Optional[Tuple[Sequence[float], Sequence[float]]] = None,
) -> bytes:
    s = session.encode("utf-8")
    if not 1 <= len(s) <= 255:
        raise ValueError("session: expected 1–255 bytes of UTF-8 (the consortium id)")
    if not isinstance(round, int) or not 0 <= round <= 0xFFFFFFFF:
        raise ValueError("round: expected an integer in [0, 2^32 − 1]")
    if not isinstance(silo, int) or not 0 <= silo <= 254:
        raise ValueError("silo: expected an integer in [0, 254]")
    pcs, pcc = per_class if per_class is not None else ((), ())
    if len(pcs) != len(pcc):
        raise ValueError("per_class: the two lists differ in length")
    out = REPORT_MAGIC + bytes([REPORT_VERSION, len(s)]) + s
    out += struct.pack(">IBddI", round, silo, _finite("singleton", singleton), _finite("complement", complement), len(pcs))
    out += b"".join(struct.pack(">d", _finite(f"per_class[0][{k}]", x)) for k, x in enumerate(pcs))
    out += b"".join(struct.pack(">d", _finite(f"per_class[1][{k}]", x)) for k, x in enumerate(pcc))
    return out


def sign_report(
    key: SiloKey,
    session: str,
    round: int,
    silo: int,
    singleton: float,
    complement: float,
    per_class: Optional[Tuple[Sequence[float], Sequence[float]]] = None,
) -> bytes:
    """The signed report of v(M0 + U_i) = `singleton` and v(M − U_i) = `complement`."""
    body = _report_body(session, round, silo, singleton, complement, per_class)
    return body + key.sign(REPORT_TAG + body)


def decode_report(data: bytes) -> dict:
    """Decodes a signed report (not verified): its fields, `body` and `signature`."""
    if len(data) < 3 + 2 + 1 + 4 + 1 + 20 + 64 or data[:3] != REPORT_MAGIC:
        raise ValueError("report: truncated or bad magic")
    if data[3] != REPORT_VERSION:
        raise ValueError(f"report: unsupported version {data[3]}")
    n = data[4]
    o = 5 + n
    if n == 0 or o + 25 + 64 > len(data):
        raise ValueError("report: truncated")
    session = data[5:o].decode("utf-8")
    round, silo, singleton, complement, k = struct.unpack_from(">IBddI", data, o)
    o += 25
    if o + 16 * k + 64 != len(data):
        raise ValueError("report: length does not match the class count")
    values = struct.unpack_from(f">{2 * k}d", data, o)
    o += 16 * k
    return {
        "session": session,
        "round": round,
        "silo": silo,
        "singleton": singleton,
        "complement": complement,
        "perClass": (list(values[:k]), list(values[k:])) if k else None,
        "body": data[:o],
        "signature": data[o:],
    }


def verify_report(public_key_hex: str, data: bytes) -> dict:
    """Decodes a report and checks its signature under the key; raises ValueError otherwise."""
    r = decode_report(data)
    if not _verify(bytes.fromhex(public_key_hex), REPORT_TAG + r["body"], r["signature"]):
        raise ValueError(f"report: not signed by silo {r['silo']}'s key")
    return r


# ── the HTTP client ──────────────────────────────────────────────────────────────────────────


class FedscoreError(Exception):
    """An error answer of the service: HTTP status, catalogue code (docs/errors.md) and message."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(f"HTTP {status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class AnswerRefusedError(FedscoreError):
    """The client refused an answer: too large, a redirect, too slow, or JSON it will not parse.

    ``code`` is one of FEDSCORE_CLIENT_ANSWER_TOO_LARGE, FEDSCORE_CLIENT_REDIRECT_REFUSED,
    FEDSCORE_CLIENT_ANSWER_TIMEOUT, FEDSCORE_CLIENT_JSON_TOO_DEEP, FEDSCORE_CLIENT_MALFORMED_JSON
    (docs/errors.md, "Errors of the silo's HTTP client").
    """


MAX_JSON_DEPTH = 64
DEFAULT_MAX_BYTES = 16 * 1024 * 1024
MAX_ERROR_BYTES = 64 * 1024
_CHUNK = 64 * 1024


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuses every redirect: a signed request is never re-sent elsewhere."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D102
        raise AnswerRefusedError(
            code,
            "FEDSCORE_CLIENT_REDIRECT_REFUSED",
            f"{req.get_method()} {urllib.parse.urlsplit(req.full_url).path}: redirect to {newurl!r} not followed",
        )


_OPENER = urllib.request.build_opener(_NoRedirect)


def _json_depth(text: str, limit: int = MAX_JSON_DEPTH) -> int:
    """Nesting depth of JSON text (brackets in strings do not count), scanned up to `limit` + 1."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif ch in "]}":
            depth -= 1
    return deepest


def parse_answer_json(data: bytes, request: str, status: int = 200) -> Any:
    """JSON of an answer, depth-checked before parsing; AnswerRefusedError otherwise."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise AnswerRefusedError(status, "FEDSCORE_CLIENT_MALFORMED_JSON", f"{request}: not UTF-8 ({e})") from None
    if _json_depth(text) > MAX_JSON_DEPTH:
        raise AnswerRefusedError(
            status, "FEDSCORE_CLIENT_JSON_TOO_DEEP", f"{request}: JSON nested deeper than {MAX_JSON_DEPTH} levels"
        )
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:
        raise AnswerRefusedError(status, "FEDSCORE_CLIENT_MALFORMED_JSON", f"{request}: not JSON ({e})") from None


class SiloClient:
    """A silo of one consortium talking to the service with signed requests."""

    def __init__(
        self,
        server: str,
        consortium: str,
        silo: int,
        key: SiloKey,
        timeout: float = 30.0,
        max_bytes: int = DEFAULT_MAX_BYTES,
        deadline: float = 120.0,
        retries: int = 5,
        backoff: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if not re.match(r"^https?://", server):
            raise ValueError(f"server: expected an http(s) URL, got {server!r}")
        if not re.match(r"^[a-z0-9][a-z0-9-]{0,62}$", consortium):
            raise ValueError(f"consortium: expected lower-case letters, digits and dashes, got {consortium!r}")
        if not isinstance(silo, int) or not 0 <= silo <= 254:
            raise ValueError("silo: expected an integer in [0, 254]")
        if not isinstance(max_bytes, int) or max_bytes < 1:
            raise ValueError("max_bytes: expected a positive integer")
        if not isinstance(retries, int) or retries < 0:
            raise ValueError("retries: expected a non-negative integer")
        if not isinstance(backoff, (int, float)) or not 0 <= backoff <= 60:
            raise ValueError("backoff: expected seconds in [0, 60]")
        self.server = server.rstrip("/")
        self.consortium = consortium
        self.silo = silo
        self.key = key
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.deadline = deadline
        self.retries = retries
        self.backoff = float(backoff)
        self.sleep = sleep

    def path(self, rest: str = "") -> str:
        return f"/v1/consortia/{self.consortium}{rest}"

    def _read(self, res: Any, cap: int, request: str, status: int, started: float) -> bytes:
        """The body, chunk by chunk: refused beyond `cap` bytes or past the deadline."""
        declared = res.headers.get("content-length") if res.headers is not None else None
        if declared is not None and declared.isdigit() and int(declared) > cap:
            raise AnswerRefusedError(
                status,
                "FEDSCORE_CLIENT_ANSWER_TOO_LARGE",
                f"{request}: body of {declared} bytes, above the {cap} bytes allowed (max_bytes)",
            )
        chunks = []
        total = 0
        while True:
            if time.monotonic() - started > self.deadline:
                raise AnswerRefusedError(
                    status,
                    "FEDSCORE_CLIENT_ANSWER_TIMEOUT",
                    f"{request}: the answer took longer than {self.deadline} s (deadline)",
                )
            chunk = res.read1(_CHUNK) if hasattr(res, "read1") else res.read(_CHUNK)
            if not chunk:
                return b"".join(chunks)
            total += len(chunk)
            if total > cap:
                raise AnswerRefusedError(
                    status,
                    "FEDSCORE_CLIENT_ANSWER_TOO_LARGE",
                    f"{request}: body of more than {cap} bytes, above the {cap} bytes allowed (max_bytes)",
                )
            chunks.append(chunk)

    def request(self, method: str, path: str, body: bytes = b"", max_bytes: Optional[int] = None) -> Tuple[int, bytes]:
        """One signed request; returns the status and the body.

        Transient failures are retried up to ``retries`` times, each attempt signed afresh (a new
        timestamp and nonce): a connection that fails or drops before an answer, and the answers
        429, 502, 503 and 504. The waits double from ``backoff`` s (0.5, 1, 2, … at most 30 s,
        with up to 25 % jitter); a ``retry-after`` of a 429 or 503 is waited out instead (at most
        120 s). Re-sending is safe: a report the service already stored answers ``duplicate``.
        The last attempt's answer is returned, or its connection error raised.

        Raises AnswerRefusedError for a body above ``max_bytes`` (default the client's), a redirect,
        or an answer slower than the deadline (not retried); socket operations time out after
        ``timeout`` s.
        """
        attempt = 0
        while True:
            try:
                status, data, retry_after = self._attempt(method, path, body, max_bytes)
            except (ConnectionError, urllib.error.URLError):
                # refused, reset, dropped before an answer (http.client.RemoteDisconnected is a
                # ConnectionError), or a connection urllib could not open (URLError)
                if attempt >= self.retries:
                    raise
                status, data, retry_after = 0, b"", None
            if status != 0 and (status not in RETRIED_STATUSES or attempt >= self.retries):
                return status, data
            self.sleep(self._wait(attempt, retry_after))
            attempt += 1

    def _wait(self, attempt: int, retry_after: Optional[str]) -> float:
        """Seconds before retry ``attempt + 1``: the answer's retry-after, else a doubling backoff."""
        if retry_after is not None and retry_after.strip().isdigit():
            return min(float(retry_after.strip()), MAX_RETRY_AFTER_S)
        base = min(self.backoff * (2**attempt), MAX_BACKOFF_S)
        return base * (1 + 0.25 * secrets.randbelow(1001) / 1000)

    def _attempt(
        self, method: str, path: str, body: bytes, max_bytes: Optional[int]
    ) -> Tuple[int, bytes, Optional[str]]:
        """One signed attempt: the status, the body and the answer's retry-after header."""
        headers = sign_request(self.key, method, path, self.silo, body)
        if body:
            headers["content-type"] = "application/octet-stream"
        req = urllib.request.Request(self.server + path, data=body or None, method=method, headers=headers)
        label = f"{method} {path}"
        started = time.monotonic()
        try:
            with _OPENER.open(req, timeout=self.timeout) as res:
                return res.status, self._read(res, max_bytes or self.max_bytes, label, res.status, started), None
        except urllib.error.HTTPError as e:
            after = e.headers.get("retry-after") if e.headers is not None else None
            return e.code, self._read(e, MAX_ERROR_BYTES, label, e.code, started), after
        except (TimeoutError, socket.timeout) as e:
            raise AnswerRefusedError(
                0, "FEDSCORE_CLIENT_ANSWER_TIMEOUT", f"{label}: no data for {self.timeout} s ({e})"
            ) from None

    def _json(self, method: str, path: str, ok: Sequence[int], body: bytes = b"") -> Any:
        status, data = self.request(method, path, body)
        if status not in ok:
            try:
                err = json.loads(data) if _json_depth(data.decode("utf-8", "replace")) <= MAX_JSON_DEPTH else None
                raise FedscoreError(status, err.get("code", "?"), err.get("message", ""))
            except (ValueError, AttributeError, RecursionError):
                raise FedscoreError(status, "?", data[:200].decode("utf-8", "replace")) from None
        return parse_answer_json(data, f"{method} {path}", status)

    def consortium_config(self) -> dict:
        """The consortium's configuration (members read it)."""
        return self._json("GET", self.path(), [200])

    def round(self, round: int) -> dict:
        """A round's stage, deadline and utilities."""
        return self._json("GET", self.path(f"/rounds/{int(round)}"), [200])

    def submit_report(
        self,
        round: int,
        singleton: float,
        complement: float,
        per_class: Optional[Tuple[Sequence[float], Sequence[float]]] = None,
    ) -> dict:
        """Signs and posts this silo's report for `round`: {silo, duplicate, stage}.

        Re-posting the same report is an idempotent success (``duplicate: true``).
        """
        report = sign_report(self.key, self.consortium, round, self.silo, singleton, complement, per_class)
        return self._json("POST", self.path(f"/rounds/{int(round)}/reports"), [200, 201], report)

    def round_scores(self, round: int) -> dict:
        """A scored round's scores: {round, silos, utilities, withOnly, without, schemes}."""
        return self._json("GET", self.path(f"/rounds/{int(round)}/scores"), [200])

    def scores(self) -> dict:
        """Every scored round's scores and the cumulative scores per scheme."""
        return self._json("GET", self.path("/scores"), [200])


# ── command line ─────────────────────────────────────────────────────────────────────────────


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The ``fedscore-client`` command (fedscore_client_cli.py)."""
    from fedscore_client_cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
