#!/bin/sh
# Checks a Fulfilgate webhook's signature with openssl, for debugging:
# sh verify.sh < body.json, with WEBHOOK_SECRET (your webhook key) and
# X_HOOK_SIGNATURE (the request's x-hook-signature header) in the
# environment. openssl takes the key on its command line, where other users
# of the machine can see it: use this on your own workstation, not in a
# receiver.
expected=$(openssl dgst -sha256 -hmac "$WEBHOOK_SECRET" -binary | openssl base64 -A)
if [ -n "$X_HOOK_SIGNATURE" ] && [ "$expected" = "$X_HOOK_SIGNATURE" ]; then
  echo "valid signature"
else
  echo "invalid signature"
  exit 1
fi
