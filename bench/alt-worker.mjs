// Child of round-trip.mjs: runs the no-session alternatives in a clean process (no conch engine state
// in it, which would otherwise slow its spawns), timing each one itself. Messages from the parent:
// { id, kind: 'nodePtySpawn' | 'childProcessSpawn' | 'liveBash' | 'liveBashNoEdit' | 'ptyDrain', cmd };
// replies { id, ms } (ptyDrain: also `bytes`, with `cmd` the byte count) or { id, error }.

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

process.on('message', async ({ id, kind, cmd }) => {
  try {
    if (kind === 'close') {
      live?.close();
      liveNoEdit?.close();
      process.send({ id, ms: 0 }, () => process.exit(0));
      return;
    }
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
            : (c) => live.run(c);
    const t0 = performance.now();
    await run(cmd);
    process.send({ id, ms: performance.now() - t0 });
  } catch (error) {
    process.send({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
process.on('disconnect', () => {
  live?.close();
  liveNoEdit?.close();
  process.exit(0);
});
