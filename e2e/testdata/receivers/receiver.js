// A webhook receiver for Fulfilgate written with nothing but Node's standard
// library. It verifies x-hook-signature the way the interface describes it:
// recompute Base64(HMAC-SHA256) over the JSON serialisation of the body
// (JSON.stringify(JSON.parse(body))) with the partner's webhook key, compare
// in constant time, answer 200 at once, then record what arrived.
//
//   node receiver.js --key <webhook key> [--port 0] [--fail-first N] [--redirect]
//
// --key        the partner's webhook key as given by the gateway (its text is
//              the HMAC key, as bytes of UTF-8); --key-b64 takes it in Base64
// --port       port on 127.0.0.1 (0: any free port; the first line printed is
//              "listening on 127.0.0.1:<port>")
// --fail-first answer 500 to the first N attempts of each x-hook-id
// --redirect   answer every delivery with 302 (the gateway must not follow)
//
// GET /received answers the JSON array of every delivery seen, in order:
// {"id","attempt","timestamp","status","verified","body"}.
'use strict';
const http = require('node:http');
const crypto = require('node:crypto');

function args(argv) {
  const o = { port: 0, failFirst: 0, redirect: false, key: null };
  for (let i = 0; i < argv.length; i++) {
    switch (argv[i]) {
      case '--port': o.port = Number(argv[++i]); break;
      case '--key': o.key = Buffer.from(argv[++i], 'utf8'); break;
      case '--key-b64': o.key = Buffer.from(argv[++i], 'base64'); break;
      case '--fail-first': o.failFirst = Number(argv[++i]); break;
      case '--redirect': o.redirect = true; break;
      default: throw new Error('unknown argument ' + argv[i]);
    }
  }
  if (!o.key) throw new Error('--key or --key-b64 is required');
  return o;
}

// verify reports whether the signature matches the re-serialised body.
function verify(key, rawBody, signature) {
  let serialised;
  try {
    serialised = JSON.stringify(JSON.parse(rawBody));
  } catch {
    return false;
  }
  const want = crypto.createHmac('sha256', key).update(serialised, 'utf8').digest();
  const got = Buffer.from(signature || '', 'base64');
  return got.length === want.length && crypto.timingSafeEqual(got, want);
}

const opts = args(process.argv.slice(2));
const received = [];
const seen = new Map(); // x-hook-id -> attempts seen

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/received') {
    const body = JSON.stringify(received);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
    return;
  }
  const chunks = [];
  let size = 0;
  req.on('data', (c) => {
    size += c.length;
    if (size <= 1 << 20) chunks.push(c);
  });
  req.on('end', () => {
    const raw = Buffer.concat(chunks).toString('utf8');
    const id = req.headers['x-hook-id'] || '';
    const n = (seen.get(id) || 0) + 1;
    seen.set(id, n);
    const verified = verify(opts.key, raw, req.headers['x-hook-signature']);
    let status = 200;
    if (opts.redirect) status = 302;
    else if (n <= opts.failFirst) status = 500;
    else if (!verified) status = 401;
    // Answer at once, before any processing.
    if (status === 302) res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' });
    else res.writeHead(status, { 'content-type': 'text/plain' });
    res.end(status === 200 ? 'ok' : 'no');
    received.push({
      id,
      attempt: req.headers['x-hook-attempt'] || '',
      timestamp: req.headers['x-hook-timestamp'] || '',
      userAgent: req.headers['user-agent'] || '',
      contentType: req.headers['content-type'] || '',
      status,
      verified,
      body: raw,
    });
  });
});

server.listen(opts.port, '127.0.0.1', () => {
  console.log('listening on 127.0.0.1:' + server.address().port);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => server.close(() => process.exit(0)));
