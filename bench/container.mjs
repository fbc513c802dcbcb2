// Container sessions against local ones, in one run, through conch's engine (docs/containers.md): the round
// trip of `true` on a persistent session, and session start (local: create_local + first `true`; container:
// a new container from the image + a session in it + first `true`, and a second session in a running
// container + first `true`). The engine is Podman's Docker-compatible service, started here on a private
// socket with private storage (`@conch/container/testing`), with a test image built on this machine.
// Rounds are interleaved, so load from other processes hits both alike.
//
// Usage: node container.mjs [--quick]   (needs the built packages, root and podman; skipped otherwise)

import { ContainerEngine, locateEngine, openContainer } from '@conch/container';
import { podmanAvailable, startPodmanService } from '@conch/container/testing';
import { benchEngine, ms, ratio, runEngineBench, sampleInterleaved, stats, table } from './lib.mjs';

const QUICK = process.argv.includes('--quick') || process.env.CONCH_BENCH_QUICK === '1';
const BASH = '/bin/bash';
const CASE_MS = QUICK ? 3_000 : 8_000;
const MAX_ROUNDS = QUICK ? 100 : 400;
const START_ROUNDS = QUICK ? 4 : 10;

if (!podmanAvailable()) {
  console.log('container bench skipped: needs root and podman');
  process.exit(0);
}

const conch = await benchEngine({ prefix: 'conch-bench-container-', limits: { maxSessions: 50 } });
const { manager, run } = conch;
const podman = await startPodmanService();
const engine = new ContainerEngine(locateEngine({ address: podman.address, origin: 'flag' }));
let counter = 0;

async function startLocal() {
  const t0 = performance.now();
  const s = await manager.createLocal({ shell: BASH });
  await run(s.session_id, 'true');
  const took = performance.now() - t0;
  await manager.closeSession(s.session_id);
  return took;
}

async function startInNewContainer() {
  const t0 = performance.now();
  const opened = await openContainer(engine, { image: podman.image, name: `bench-${++counter}` });
  const s = await manager.openSession(opened.driver, { kind: 'container', shell: BASH });
  await run(s.id, 'true');
  const took = performance.now() - t0;
  await manager.closeSession(s.id);
  return took;
}

async function main() {
  const local = (await manager.createLocal({ shell: BASH })).session_id;
  const opened = await openContainer(engine, { image: podman.image, name: 'bench' });
  const boxed = (await manager.openSession(opened.driver, { kind: 'container', shell: BASH })).id;
  const startInRunning = async () => {
    const t0 = performance.now();
    const s = await manager.openSession(opened.driver, { kind: 'container', shell: BASH });
    await run(s.id, 'true');
    const took = performance.now() - t0;
    await manager.closeSession(s.id).catch(() => {});
    return took;
  };
  const results = {};
  const trip = await sampleInterleaved(
    { local: () => run(local, 'true'), container: () => run(boxed, 'true') },
    { warmup: 10, maxRounds: MAX_ROUNDS, maxMs: CASE_MS },
  );
  results.roundTrip = { local: stats(trip.local), container: stats(trip.container) };
  const starts = await sampleInterleaved(
    { local: startLocal, container: startInNewContainer, running: startInRunning },
    { warmup: 1, maxRounds: START_ROUNDS, minRounds: START_ROUNDS, maxMs: 0 },
  );
  results.sessionStart = {
    local: stats(starts.local),
    container: stats(starts.container),
    running: stats(starts.running),
  };
  const row = (label, local, container) => [
    label,
    `${ms(local.median)} / ${ms(local.p90)}`,
    `${ms(container.median)} / ${ms(container.p90)}`,
    ratio(container.median, local.median),
    container.n,
  ];
  console.log(
    '\nContainer sessions (Podman service, runc) vs local sessions, interleaved rounds; median / p90',
  );
  console.log(
    table(
      ['case', 'local', 'container', 'container ÷ local', 'n'],
      [
        row('`true` (persistent session)', results.roundTrip.local, results.roundTrip.container),
        row(
          'session start, new container (+ first `true`)',
          results.sessionStart.local,
          results.sessionStart.container,
        ),
        row(
          'session start, running container (+ first `true`)',
          results.sessionStart.local,
          results.sessionStart.running,
        ),
      ],
    ),
  );
  return results;
}

await runEngineBench(conch, {
  name: 'container bench',
  section: 'container',
  main,
  capMs: 240_000,
  shutdownCapMs: 30_000,
  stop: () => podman.stop().catch((e) => console.error(String(e))),
});
