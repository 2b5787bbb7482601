# Checks a Fulfilgate webhook's signature: python3 verify.py < body.json,
# with WEBHOOK_SECRET (your webhook key) and X_HOOK_SIGNATURE (the request's
# x-hook-signature header) in the environment. In a receiver, verify the raw
# body, e.g. with Flask:
#
#   @app.post("/hooks")
#   def hooks():
#       if not verify(request.get_data(), request.headers.get("x-hook-signature", ""), secret):
#           abort(401)
#       return "", 200  # answer at once, then process
import base64
import hashlib
import hmac
import os
import sys


def verify(raw_body: bytes, signature: str, secret: str) -> bool:
    """Whether signature is the Base64 HMAC-SHA256 of raw_body keyed with
    the webhook key, compared in constant time."""
    digest = hmac.new(secret.encode(), raw_body, hashlib.sha256).digest()
    return hmac.compare_digest(base64.b64encode(digest).decode(), signature or "")


if __name__ == "__main__":
    ok = verify(sys.stdin.buffer.read(), os.environ.get("X_HOOK_SIGNATURE", ""),
                os.environ.get("WEBHOOK_SECRET", ""))
    print("valid signature" if ok else "invalid signature")
    sys.exit(0 if ok else 1)
