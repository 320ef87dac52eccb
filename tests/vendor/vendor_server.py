"""A tool vendor's own server, for the end-to-end tests: the supplier behind the
"Supplier prices" example tool.

It is what a vendor would write, with a third-party JOSE library: every request
must carry the tenant's API key (which the toolbridge server puts in from the
tool's secret setting) and an identity token that PyJWT verifies against the
toolbridge server's published keys (`/.well-known/jwks.json`, with
PyJWKClient), for the tool's origin as audience and the app as issuer.

Run by the e2e harness on loopback over https:

    python vendor_server.py --port P --cert C --key K --jwks URL --issuer URL \
        --audience ORIGIN --tool SLUG --api-key KEY --log FILE

Routes:
    GET  /v1/prices?q=…   the price list (key and token required)
    POST /v1/echo         the request body back, as it came (key and token required)
    GET  /v1/big?bytes=N  N bytes of answer (key required)
    GET  /v1/slow?secs=S  answers after S seconds (key required)
    POST /v1/verify       the body is a token; answers whether PyJWT accepts it, and
                          why not (`?ahead=S` verifies as if the clock were S s ahead)

Every request is logged to --log as one JSON line: method, path, which
checks passed and the verified claims. The API key itself is never logged.
"""

import argparse
import json
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import jwt

PRICES = [
    {"code": "OAK-12", "description": "Oak plank 12 mm", "unit": "m²", "cost": 42.5},
    {"code": "OAK-18", "description": "Oak plank 18 mm", "unit": "m²", "cost": 58.0},
    {"code": "ULAY-3", "description": "Acoustic underlay 3 mm", "unit": "m²", "cost": 6.2},
    {"code": "GLUE-5", "description": "Flooring adhesive 5 l", "unit": "each", "cost": 31.9},
]
UPDATED_AT = "2026-11-27T20:30:00Z"


class Vendor:
    def __init__(self, args):
        self.args = args
        # A token naming a key the cached set lacks (after the operator rotates) fetches the
        # set again at once: PyJWT's default waits up to 30 s between such fetches.
        self.jwks = jwt.PyJWKClient(args.jwks, cache_keys=True, lifespan=300, cooldown_duration=0)
        self.lock = threading.Lock()

    def verify(self, token, ahead=0):
        """The token's claims, as PyJWT verified them; raises jwt.InvalidTokenError."""
        key = self.jwks.get_signing_key_from_jwt(token)
        return jwt.decode(
            token,
            key.key,
            algorithms=["ES256"],
            audience=self.args.audience,
            issuer=self.args.issuer,
            # A negative leeway moves the clock ahead: the token must still live then. (Its
            # `iat` is then in the past however far ahead, so that check is left out.)
            leeway=-ahead,
            options={"require": ["exp", "iat", "sub", "aud", "iss", "jti"], "verify_iat": ahead == 0},
        )

    def log(self, entry):
        with self.lock, open(self.args.log, "a", encoding="utf-8") as log:
            log.write(json.dumps(entry) + "\n")


def handler(vendor):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args):  # noqa: A002 - the base class's name
            pass

        def answer(self, status, body, content_type="application/json"):
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("X-Vendor", "supplier")
            self.end_headers()
            self.wfile.write(data)

        def body(self):
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def checked(self, need_token=True):
            """Whether the key and token are good; answers 401 and returns None when not."""
            url = urlparse(self.path)
            entry = {"method": self.command, "path": url.path, "keyOk": False, "tokenOk": None}
            entry["keyOk"] = self.headers.get("X-Api-Key") == vendor.args.api_key
            claims = None
            if need_token:
                auth = self.headers.get("Authorization", "")
                try:
                    if not auth.startswith("Bearer "):
                        raise jwt.InvalidTokenError("no Bearer token")
                    claims = vendor.verify(auth[len("Bearer "):])
                    if claims.get("tool") != vendor.args.tool:
                        raise jwt.InvalidTokenError(f"token for tool {claims.get('tool')!r}")
                    entry["tokenOk"] = True
                    entry["claims"] = {k: claims[k] for k in ("sub", "tid", "role", "tool", "ver", "aud", "iss") if k in claims}
                except jwt.InvalidTokenError as error:
                    entry["tokenOk"] = False
                    entry["tokenError"] = f"{type(error).__name__}: {error}"
            vendor.log(entry)
            if not entry["keyOk"] or entry["tokenOk"] is False:
                self.answer(401, {"error": "bad key or token"})
                return None
            return parse_qs(url.query), claims

        def do_GET(self):  # noqa: N802 - the base class's name
            path = urlparse(self.path).path
            if path == "/v1/prices":
                checked = self.checked()
                if checked is None:
                    return
                query, _ = checked
                words = (query.get("q") or [""])[0].lower().split()
                items = [p for p in PRICES if all(w in f"{p['code']} {p['description']}".lower() for w in words)]
                self.answer(200, {"updatedAt": UPDATED_AT, "currency": vendor.args.currency, "items": items})
            elif path == "/v1/big":
                checked = self.checked(need_token=False)
                if checked is None:
                    return
                size = int((checked[0].get("bytes") or ["0"])[0])
                self.answer(200, b"x" * size, "application/octet-stream")
            elif path == "/v1/slow":
                checked = self.checked(need_token=False)
                if checked is None:
                    return
                time.sleep(float((checked[0].get("secs") or ["20"])[0]))
                self.answer(200, {"slow": True})
            else:
                self.answer(404, {"error": f"no route {path}"})

        def do_POST(self):  # noqa: N802 - the base class's name
            url = urlparse(self.path)
            body = self.body()
            if url.path == "/v1/echo":
                if self.checked() is None:
                    return
                self.answer(200, body, self.headers.get("Content-Type") or "application/octet-stream")
            elif url.path == "/v1/verify":
                ahead = float((parse_qs(url.query).get("ahead") or ["0"])[0])
                try:
                    claims = vendor.verify(body.decode(), ahead)
                    if claims.get("tool") != vendor.args.tool:
                        raise jwt.InvalidTokenError(f"token for tool {claims.get('tool')!r}")
                    self.answer(200, {"ok": True, "claims": claims})
                except (jwt.InvalidTokenError, jwt.PyJWKClientError, UnicodeDecodeError) as error:
                    self.answer(200, {"ok": False, "error": f"{type(error).__name__}: {error}"})
            else:
                self.answer(404, {"error": f"no route {url.path}"})

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("cert", "key", "jwks", "issuer", "audience", "tool", "api-key", "log"):
        parser.add_argument(f"--{name}", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--currency", default="NZD")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler(Vendor(args)))
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(f"vendor: listening at https://127.0.0.1:{args.port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
