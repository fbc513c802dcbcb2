#!/usr/bin/env node
/**
 * The README's first run, as a new user has it (a CI step of `.ci/run`; it downloads from the npm registry,
 * so it is not a test): clone this repository into an empty directory and, with an empty HOME (no package
 * store, no npm or node-gyp cache),
 *
 * 1. `node scripts/conch-mcp.mjs` answers `initialize` and `execute {command: "echo hi"}` over stdio;
 * 2. with another empty HOME (as an MCP client's own environment), `node scripts/conch.mjs exec -- 'echo hi'`
 *    prints `hi` (its daemon in a private CONCH_HOME, stopped afterwards);
 * 3. `node scripts/conch-mcp.mjs` still answers from that other HOME.
 *
 * Prints the time each first run took. Exits 1 on the first failure; every step has a time bound. The clone
 * is of the committed HEAD. The bridge (`scripts/conch-opencode.mjs`) is not run: it downloads OpenCode.
 */

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mcpExchange, resultText } from './mcp-exchange.mjs';
import { ROOT } from './package-rules.mjs';

const FIRST_RUN_TIMEOUT_MS = 10 * 60_000;
const work = mkdtempSync(join(tmpdir(), 'conch-fresh-clone-'));
const repo = join(work, 'repo');
const conchHome = join(work, 'conch-home');
let stopDaemon = () => {};

function done(code, message) {
  console[code === 0 ? 'log' : 'error'](`fresh-clone: ${code === 0 ? 'ok  ' : 'FAIL'} ${message}`);
  stopDaemon();
  rmSync(work, { recursive: true, force: true });
  if (code !== 0) process.exit(code);
}

/** An empty HOME and the environment of a user who has only Node and npm. */
function emptyHome(name) {
  const home = join(work, name);
  mkdirSync(home);
  return { PATH: process.env.PATH, HOME: home, LANG: 'C.UTF-8' };
}

async function serverAnswers(env, what) {
  const started = Date.now();
  const { results, stderr } = await mcpExchange({
    command: process.execPath,
    args: [join(repo, 'scripts', 'conch-mcp.mjs')],
    cwd: work,
    env,
    requests: [{ method: 'tools/call', params: { name: 'execute', arguments: { command: 'echo hi' } } }],
    timeoutMs: FIRST_RUN_TIMEOUT_MS,
  }).catch((error) => done(1, `node scripts/conch-mcp.mjs (${what}): ${error.message}`));
  if (!/^hi$/m.test(resultText(results[0]))) done(1, `execute echo hi gave ${resultText(results[0])}`);
  const notes = stderr
    .split('\n')
    .filter((line) => line.startsWith('[conch bootstrap]'))
    .map((line) => line.slice('[conch bootstrap] '.length));
  console.log(
    `fresh-clone: ok   node scripts/conch-mcp.mjs (${what}) answered execute in ${Math.round((Date.now() - started) / 1000)} s${notes.length ? `: ${notes.join('; ')}` : ''}`,
  );
}

const clone = spawnSync('git', ['clone', '--quiet', '--no-hardlinks', ROOT, repo], {
  encoding: 'utf8',
  timeout: 120_000,
});
if (clone.status !== 0) done(1, `git clone: ${clone.stderr}`);

await serverAnswers(emptyHome('home-a'), 'empty HOME');

const other = { ...emptyHome('home-b'), CONCH_HOME: conchHome, NO_COLOR: '1' };
const conch = (args, timeout) =>
  spawnSync(process.execPath, [join(repo, 'scripts', 'conch.mjs'), ...args], {
    cwd: work,
    env: other,
    encoding: 'utf8',
    timeout,
    killSignal: 'SIGKILL',
  });
stopDaemon = () => conch(['daemon', 'stop'], 60_000);
const started = Date.now();
const exec = conch(['exec', '--', 'echo hi'], FIRST_RUN_TIMEOUT_MS);
if (exec.status !== 0 || exec.stdout.trim() !== 'hi')
  done(1, `node scripts/conch.mjs exec (another HOME) exited ${exec.status}: ${exec.stdout}${exec.stderr}`);
console.log(
  `fresh-clone: ok   node scripts/conch.mjs exec -- 'echo hi' (another empty HOME) printed hi in ${Math.round((Date.now() - started) / 1000)} s`,
);

await serverAnswers(other, 'that other HOME');
done(0, 'every first run answered');
