// Child of round-trip.mjs: runs the no-session alternatives in a clean process (no conch engine state
// in it, which would otherwise slow its spawns), timing each one itself. Messages from the parent:
// { id, kind: 'nodePtySpawn' | 'childProcessSpawn' | 'liveBash', cmd }; replies { id, ms } or { id, error }.

import { spawn as spawnChild } from 'node:child_process';
import pty from 'node-pty';

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

/** A live bash in node-pty; each command is followed by a marker carrying `$?` (the floor). */
let live;
function liveBash() {
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
  p.write("stty -echo; PS1=''; PS2=''; printf '\\036READY\\037'\r");
  const ready = waitFor(/\x1eREADY\x1f/);
  return {
    ready,
    run: async (cmd) => {
      p.write(`${cmd}; printf '\\036%d\\037' $?\r`);
      const m = await waitFor(/\x1e(\d+)\x1f/);
      if (m[1] !== '0') throw new Error(`live bash: ${cmd} exited ${m[1]}`);
    },
    close: () => p.kill('SIGKILL'),
  };
}

process.on('message', async ({ id, kind, cmd }) => {
  try {
    if (kind === 'close') {
      live?.close();
      process.send({ id, ms: 0 }, () => process.exit(0));
      return;
    }
    if (kind === 'liveBash' && !live) {
      live = liveBash();
      await live.ready;
    }
    const run =
      kind === 'nodePtySpawn' ? ptySpawn : kind === 'childProcessSpawn' ? childSpawn : (c) => live.run(c);
    const t0 = performance.now();
    await run(cmd);
    process.send({ id, ms: performance.now() - t0 });
  } catch (error) {
    process.send({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
process.on('disconnect', () => {
  live?.close();
  process.exit(0);
});
