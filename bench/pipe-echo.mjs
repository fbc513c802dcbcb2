// The other end of the pipe floor (alt-worker.mjs): reads JSON-RPC requests, one per line, on stdin and
// answers each with a one-line JSON result on stdout. No SDK, no shell: what a request and its reply cost
// between two node processes over stdio pipes.

let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
    const request = JSON.parse(buffer.slice(0, nl));
    buffer = buffer.slice(nl + 1);
    process.stdout.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: request.id, result: { content: [{ type: 'text', text: '[exit 0 · 0 ms]' }] } })}\n`,
    );
  }
});
process.stdin.on('end', () => process.exit(0));
