/**
 * The CLI's answer to the service's question for the person (e.g. whether to trust an unknown SSH host key):
 * the daemon asks through MCP elicitation, and the CLI asks on its terminal, yes or no. Only declared when
 * stdin and stderr are a TTY, so scripts are never stopped by a question (they get a refusal saying why).
 */

import { isatty } from 'node:tty';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { withSpinnersPaused } from './terminal-output.js';

/**
 * True when the CLI can ask the person: stdin and stderr are a terminal. Asked of the file descriptors, so
 * that a command that never reads stdin does not set up its stream.
 */
export function canAskOnTty(): boolean {
  return isatty(0) && isatty(2);
}

/** Reads one line from the terminal after `prompt`; ctrl+c or EOF is no answer (an empty line). */
async function readLine(prompt: string): Promise<string> {
  // Loaded when a question is asked, not at every start of the CLI.
  const { createInterface } = await import('node:readline');
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    let answered = false;
    const finish = (answer: string) => {
      if (answered) return;
      answered = true;
      rl.close();
      resolve(answer);
    };
    rl.on('SIGINT', () => {
      process.stderr.write('\n');
      finish('');
    });
    rl.on('close', () => finish(''));
    rl.question(prompt, finish);
  });
}

/**
 * Answers a form elicitation of yes/no questions on the terminal: the message, then each boolean field as
 * `TITLE? [y/N]`. Accepted only when every field is answered yes; anything else declines.
 */
export async function askOnTty(params: ElicitRequest['params']): Promise<ElicitResult> {
  if (params.mode === 'url' || !('requestedSchema' in params)) return { action: 'decline' };
  const fields = Object.entries(params.requestedSchema.properties);
  if (fields.length === 0 || fields.some(([, schema]) => schema.type !== 'boolean')) {
    return { action: 'decline' };
  }
  return withSpinnersPaused(async () => {
    process.stderr.write(`\n${params.message}\n\n`);
    const content: Record<string, boolean> = {};
    for (const [name, schema] of fields) {
      const title = 'title' in schema && typeof schema.title === 'string' ? schema.title : name;
      const answer = (await readLine(`${title}? [y/N] `)).trim().toLowerCase();
      content[name] = answer === 'y' || answer === 'yes';
      if (!content[name]) return { action: 'decline' };
    }
    return { action: 'accept', content };
  });
}
