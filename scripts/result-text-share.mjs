#!/usr/bin/env node
// Measures what an agent reads of conch's small command results: a scripted agent does everyday tasks
// through the built server (default profile, over stdio with the MCP client) and, for each result, counts
// the characters of the text block, of the output in it, and of everything else (the status line and the
// line break that joins it to the output); it also counts the characters of the structured result as JSON.
// Prints one row per task and the totals, with the status text's share of all the text.
//
//   node scripts/result-text-share.mjs            # a table
//   node scripts/result-text-share.mjs --json     # the same as JSON
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const fromServer = (path) => pathToFileURL(join(root, 'apps', 'mcp-server', 'node_modules', path)).href;
const { Client } = await import(fromServer('@modelcontextprotocol/sdk/dist/esm/client/index.js'));
const { StdioClientTransport } = await import(
  fromServer('@modelcontextprotocol/sdk/dist/esm/client/stdio.js')
);

// A small git project to work in (HOME is empty so that no user rc file changes what the shell prints).
const home = mkdtempSync(join(tmpdir(), 'conch-result-share-'));
const project = join(home, 'project');
mkdirSync(join(project, 'src'), { recursive: true });
writeFileSync(join(project, 'README.md'), '# demo\n');
writeFileSync(join(project, 'src', 'main.py'), 'print("hi")\n');
const git = (...args) => execFileSync('git', args, { cwd: project, stdio: 'ignore' });
git('init', '-q');
git('-c', 'user.name=a', '-c', 'user.email=a@b', 'add', '.');
git('-c', 'user.name=a', '-c', 'user.email=a@b', 'commit', '-qm', 'init');
writeFileSync(join(project, 'src', 'main.py'), 'print("hello")\n');

/** The tasks: [name, tool arguments of execute]. */
const TASKS = [
  ['cd into the project', { command: `cd ${project}` }],
  ['ls', { command: 'ls' }],
  ['git status --short', { command: 'git status --short' }],
  ['echo', { command: 'echo hello' }],
  ['export (no output)', { command: 'export MODE=dev' }],
  ['a failing command', { command: 'cat missing.txt' }],
  ['a partial (silent sleep)', { command: 'sleep 30', pause_timeout: 0.5 }],
];

const transport = new StdioClientTransport({
  command: process.execPath,
  args: [join(root, 'apps', 'mcp-server', 'dist', 'bin.cjs')],
  env: { ...process.env, HOME: home },
  stderr: 'ignore',
});
const client = new Client({ name: 'conch-result-share', version: '1' });
await client.connect(transport);
await client.listTools();
const rows = [];
try {
  for (const [name, args] of TASKS) {
    const result = await client.callTool({ name: 'execute', arguments: args });
    const text = result.content?.[0]?.text ?? '';
    const structured = result.structuredContent ?? {};
    const output = String(structured.output ?? '').replace(/\n$/, '');
    const status = text.length - output.length;
    rows.push({
      task: name,
      text_chars: text.length,
      output_chars: output.length,
      status_chars: status,
      structured_chars: JSON.stringify(structured).length,
      text,
    });
    if (structured.status === 'partial')
      await client.callTool({ name: 'kill_process', arguments: { command_id: structured.command_id } });
  }
} finally {
  await client.close();
  rmSync(home, { recursive: true, force: true });
}

const sum = (key) => rows.reduce((total, row) => total + row[key], 0);
const totals = {
  text_chars: sum('text_chars'),
  output_chars: sum('output_chars'),
  status_chars: sum('status_chars'),
  structured_chars: sum('structured_chars'),
};
const share = totals.status_chars / totals.text_chars;
if (process.argv.includes('--json')) {
  console.log(JSON.stringify({ rows, totals, status_share: share }, null, 2));
} else {
  for (const row of rows) {
    console.log(
      `${row.task.padEnd(26)} text ${String(row.text_chars).padStart(4)}  output ${String(row.output_chars).padStart(4)}` +
        `  status ${String(row.status_chars).padStart(4)}  structured ${String(row.structured_chars).padStart(4)}  ${JSON.stringify(row.text.replace(home, '~'))}`,
    );
  }
  console.log(
    `total: text ${totals.text_chars}, output ${totals.output_chars}, status ${totals.status_chars} ` +
      `(${(share * 100).toFixed(0)}% of the text), structured JSON ${totals.structured_chars}`,
  );
}
