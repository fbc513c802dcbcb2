// Child of round-trip.mjs and targets.mjs: runs the no-session alternatives and the floors in a clean
// process (no conch engine state in it, which would otherwise slow its spawns), timing each one itself.
// Messages from the parent:
// { id, kind: 'nodePtySpawn' | 'childProcessSpawn' | 'liveBash' | 'liveBashNoEdit' | 'pipeFloor' | 'ptyDrain',
//   cmd, repeat? };
// replies { id, ms } (ptyDrain: also `bytes`, with `cmd` the byte count) or { id, error }. With
// `repeat` n > 1 the run is made n times back to back ("warm") and the reply also carries `samples`, the n
// times in ms.

import { spawn as spawnChild } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pty from '@lydell/node-pty';

const BASH = '/bin/bash';
const cwd = process.env.BENCH_CWD ?? process.cwd();
const env = { ...process.env, TERM: 'xterm-256color', HISTFILE: '/dev/null' };

function ptySpawn(cmd) {
  return new Promise((resolve, reject) => {
    const p = pty.spawn(BASH, ['-c', cmd], { name: 'xterm-256color', cols: 200, rows: 50, cwd, env });
    p.onData(() => {});
    p.onExit(({ exitCode }) =>
      exitCode === 0 ? resolve() : reject(new Error(`node-pty: ${cmd} exited ${exitCode}`)),
    );
  });
}

function childSpawn(cmd) {
  return new Promise((resolve, reject) => {
    const c = spawnChild(BASH, ['-c', cmd], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    c.stdout.on('data', () => {});
    c.stderr.on('data', () => {});
    c.on('error', reject);
    c.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`child_process: ${cmd} exited ${code}`)),
    );
  });
}

/**
 * `yes | head -c BYTES` through a fresh `bash -c` on node-pty, every byte counted: the raw drain rate a
 * PTY gives on this machine, for the flood ratio.
 */
function ptyDrain(bytes) {
  return new Promise((resolve, reject) => {
    const p = pty.spawn(BASH, ['-c', `yes | head -c ${bytes}`], {
      name: 'xterm-256color',
      cols: 200,
      rows: 50,
      cwd,
      env,
    });
    let seen = 0;
    p.onData((d) => {
      seen += d.length;
    });
    p.onExit(({ exitCode }) =>
      exitCode === 0 ? resolve(seen) : reject(new Error(`node-pty drain exited ${exitCode}`)),
    );
  });
}

/**
 * A live bash in node-pty; each command is followed by a marker carrying `$?` (the floor). With
 * `editing` false, readline is off (as in conch's sessions on Linux) and lines end in NL.
 */
let live;
let liveNoEdit;
function liveBash(editing = true) {
  const p = pty.spawn(BASH, ['--norc', '--noprofile'], {
    name: 'xterm-256color',
    cols: 200,
    rows: 50,
    cwd,
    env: { ...env, PS1: '' },
  });
  let buf = '';
  let check = null;
  p.onData((d) => {
    buf += d;
    check?.();
  });
  const waitFor = (re) =>
    new Promise((resolve) => {
      check = () => {
        const m = re.exec(buf);
        if (m) {
          buf = buf.slice(m.index + m[0].length);
          check = null;
          resolve(m);
        }
      };
      check();
    });
  const eol = editing ? '\r' : '\n';
  p.write(
    `stty -echo; PS1=''; PS2=''; ${editing ? '' : 'set +o emacs +o vi; '}printf '\\036READY\\037'${eol}`,
  );
  const ready = waitFor(/\x1eREADY\x1f/);
  return {
    ready,
    run: async (cmd) => {
      p.write(`${cmd}; printf '\\036%d\\037' $?${eol}`);
      const m = await waitFor(/\x1e(\d+)\x1f/);
      if (m[1] !== '0') throw new Error(`live bash: ${cmd} exited ${m[1]}`);
    },
    close: () => p.kill('SIGKILL'),
  };
}

/**
 * The pipe floor: a node process running pipe-echo.mjs, sent a JSON-RPC `tools/call` request as one line
 * on its stdin and answering one line on its stdout; no SDK, no shell.
 */
let pipe;
function pipeFloor() {
  const child = spawnChild(
    process.execPath,
    [join(dirname(fileURLToPath(import.meta.url)), 'pipe-echo.mjs')],
    { cwd, env, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  child.stdout.setEncoding('utf8');
  let buf = '';
  let waiter = null;
  let nextId = 0;
  child.stdout.on('data', (d) => {
    buf += d;
    const nl = buf.indexOf('\n');
    if (nl < 0) return;
    const reply = JSON.parse(buf.slice(0, nl));
    buf = buf.slice(nl + 1);
    const w = waiter;
    waiter = null;
    w?.(reply);
  });
  return {
    run: async (cmd) => {
      const id = ++nextId;
      const reply = await new Promise((resolve) => {
        waiter = resolve;
        child.stdin.write(
          `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'execute', arguments: { command: cmd } } })}\n`,
        );
      });
      if (reply.id !== id) throw new Error(`pipe floor: reply ${reply.id} to request ${id}`);
    },
    close: () => child.kill('SIGKILL'),
  };
}

function closeAll() {
  live?.close();
  liveNoEdit?.close();
  pipe?.close();
}

process.on('message', async ({ id, kind, cmd, repeat }) => {
  try {
    if (kind === 'close') {
      closeAll();
      process.send({ id, ms: 0 }, () => process.exit(0));
      return;
    }
    if (kind === 'pipeFloor' && !pipe) pipe = pipeFloor();
    if (kind === 'liveBash' && !live) {
      live = liveBash(true);
      await live.ready;
    }
    if (kind === 'liveBashNoEdit' && !liveNoEdit) {
      liveNoEdit = liveBash(false);
      await liveNoEdit.ready;
    }
    if (kind === 'ptyDrain') {
      const t0 = performance.now();
      const bytes = await ptyDrain(Number(cmd));
      process.send({ id, ms: performance.now() - t0, bytes });
      return;
    }
    const run =
      kind === 'nodePtySpawn'
        ? ptySpawn
        : kind === 'childProcessSpawn'
          ? childSpawn
          : kind === 'liveBashNoEdit'
            ? (c) => liveNoEdit.run(c)
            : kind === 'pipeFloor'
              ? (c) => pipe.run(c)
              : (c) => live.run(c);
    const samples = [];
    for (let i = 0; i < Math.max(1, repeat ?? 1); i++) {
      const t0 = performance.now();
      await run(cmd);
      samples.push(performance.now() - t0);
    }
    process.send(repeat > 1 ? { id, ms: samples[0], samples } : { id, ms: samples[0] });
  } catch (error) {
    process.send({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
process.on('disconnect', () => {
  closeAll();
  process.exit(0);
});
