"""A webhook receiver for Fulfilgate written with nothing but Python's standard
library. It verifies x-hook-signature the way the interface describes it:
recompute Base64(HMAC-SHA256) over the JSON serialisation of the body
(json.dumps(json.loads(body), separators=(",", ":"), ensure_ascii=False)) with
the partner's webhook key, compare in constant time, answer 200 at once, then
record what arrived.

    python3 receiver.py --key <webhook key> [--port 0] [--fail-first N] [--redirect]

--key        the partner's webhook key as given by the gateway (its text is the
             HMAC key, as bytes of UTF-8); --key-b64 takes it in Base64
--port       port on 127.0.0.1 (0: any free port; the first line printed is
             "listening on 127.0.0.1:<port>")
--fail-first answer 500 to the first N attempts of each x-hook-id
--redirect   answer every delivery with 302 (the gateway must not follow)

GET /received answers the JSON array of every delivery seen, in order:
{"id","attempt","timestamp","status","verified","body"}.
"""
import argparse
import base64
import hashlib
import hmac
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def verify(key: bytes, raw: bytes, signature: str) -> bool:
    """Reports whether signature matches the re-serialised body."""
    try:
        serialised = json.dumps(json.loads(raw), separators=(",", ":"), ensure_ascii=False)
    except ValueError:
        return False
    want = hmac.new(key, serialised.encode("utf-8"), hashlib.sha256).digest()
    try:
        got = base64.b64decode(signature or "", validate=True)
    except ValueError:
        return False
    return hmac.compare_digest(got, want)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--key")
    p.add_argument("--key-b64")
    p.add_argument("--fail-first", type=int, default=0)
    p.add_argument("--redirect", action="store_true")
    a = p.parse_args()
    if a.key is not None:
        key = a.key.encode("utf-8")
    elif a.key_b64 is not None:
        key = base64.b64decode(a.key_b64)
    else:
        p.error("--key or --key-b64 is required")

    lock = threading.Lock()
    received = []
    seen = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # keep the test output quiet
            pass

        def do_GET(self):
            if self.path != "/received":
                self.send_error(404)
                return
            with lock:
                body = json.dumps(received).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(min(n, 1 << 20))
            hook_id = self.headers.get("x-hook-id", "")
            ok = verify(key, raw, self.headers.get("x-hook-signature", ""))
            with lock:
                seen[hook_id] = seen.get(hook_id, 0) + 1
                attempt = seen[hook_id]
            status = 200
            if a.redirect:
                status = 302
            elif attempt <= a.fail_first:
                status = 500
            elif not ok:
                status = 401
            # Record (a list append, so the answer is still immediate and a
            # GET /received that follows the answer sees it), then answer
            # before any processing.
            with lock:
                received.append({
                    "id": hook_id,
                    "attempt": self.headers.get("x-hook-attempt", ""),
                    "timestamp": self.headers.get("x-hook-timestamp", ""),
                    "userAgent": self.headers.get("User-Agent", ""),
                    "contentType": self.headers.get("Content-Type", ""),
                    "status": status,
                    "verified": ok,
                    "body": raw.decode("utf-8", "replace"),
                })
            reply = b"ok" if status == 200 else b"no"
            self.send_response(status)
            if status == 302:
                self.send_header("Location", "http://127.0.0.1:1/elsewhere")
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

    server = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    print("listening on 127.0.0.1:%d" % server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
