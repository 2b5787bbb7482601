// Checks a Fulfilgate webhook's signature: node verify.js < body.json,
// with WEBHOOK_SECRET (your webhook key) and X_HOOK_SIGNATURE (the request's
// x-hook-signature header) in the environment. In a receiver, verify the raw
// body, e.g. with Express:
//
//   app.post('/hooks', express.raw({ type: 'application/json' }), (req, res) => {
//     if (!verify(req.body, req.get('x-hook-signature'), secret)) return res.sendStatus(401);
//     res.sendStatus(200); // answer at once, then process
//   });
const crypto = require('crypto');

// verify tells whether signature is the Base64 HMAC-SHA256 of rawBody (a
// Buffer) keyed with the webhook key, comparing in constant time.
function verify(rawBody, signature, secret) {
  const expected = crypto.createHmac('sha256', secret).update(rawBody).digest();
  const got = Buffer.from(signature || '', 'base64');
  return got.length === expected.length && crypto.timingSafeEqual(got, expected);
}

const chunks = [];
process.stdin.on('data', (c) => chunks.push(c)).on('end', () => {
  const ok = verify(Buffer.concat(chunks), process.env.X_HOOK_SIGNATURE, process.env.WEBHOOK_SECRET || '');
  console.log(ok ? 'valid signature' : 'invalid signature');
  process.exit(ok ? 0 : 1);
});
