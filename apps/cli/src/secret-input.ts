/**
 * Reads one line from the terminal without echoing it (`conch respond ID --secret` without TEXT).
 * Without a TTY on stdin it reads the first line of stdin, so scripts can pipe a secret in.
 */

/** Prompts on stderr and reads one line without echo. */
export function readSecret(prompt: string): Promise<string> {
  const input = process.stdin;
  if (!input.isTTY) {
    return new Promise((resolve, reject) => {
      let data = '';
      input.setEncoding('utf8');
      input.on('data', (chunk: string) => {
        data += chunk;
        const end = data.indexOf('\n');
        if (end >= 0) {
          input.pause();
          resolve(data.slice(0, end).replace(/\r$/, ''));
        }
      });
      input.once('end', () => resolve(data.replace(/\r?\n$/, '')));
      input.once('error', reject);
    });
  }
  return new Promise((resolve, reject) => {
    let line = '';
    // Echo goes off before the prompt shows: what is typed (or pasted) right after it is never echoed.
    input.setRawMode(true);
    process.stderr.write(prompt);
    input.setEncoding('utf8');
    input.resume();
    const done = (error?: Error) => {
      input.setRawMode(false);
      input.pause();
      input.off('data', onData);
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(line);
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n') return done();
        if (char === '\u0003') return done(new Error('cancelled'));
        if (char === '\u007f' || char === '\b') line = line.slice(0, -1);
        else if (char >= ' ') line += char;
      }
    };
    input.on('data', onData);
  });
}
