/**
 * ConchService in process, on the core's FakeDriver (a scripted shell): the verbs take and return plain
 * JSON, the call context carries cancellation, progress, the face's words and the question to the person,
 * and close() ends what the engine started. The faces' own tests (packages/mcp, apps/*) run it for real.
 */

import { ConchError, createRealClock, ErrorCode, NEUTRAL_VOCABULARY } from '@conch/core';
import { FakeDriver } from '@conch/core/testing';
import type { ConnectSshOptions, HostKeyQuestion, SshConnection, SshDriver } from '@conch/ssh';
import { afterEach, describe, expect, test } from 'vitest';
import type { ServiceQuestion } from './call-context.js';
import { ConchService } from './service.js';

const clock = createRealClock();
const services: ConchService[] = [];
afterEach(async () => {
  for (const service of services.splice(0)) await service.close();
});

function serviceWith(options: { connect?: (o: ConnectSshOptions) => Promise<SshConnection> } = {}) {
  const lines = Array.from({ length: 3000 }, (_, i) => `line ${i}`).join('\n');
  const driver = new FakeDriver({
    clock,
    commands: {
      'print many': (ctx) => {
        ctx.print(`${lines}\n`);
        ctx.exit(0);
      },
    },
  });
  const service = new ConchService({
    engine: { clock, localDriver: driver },
    ...(options.connect ? { ssh: { connect: options.connect } } : {}),
  });
  services.push(service);
  return service;
}

describe('ConchService', () => {
  test('the verbs take and return plain JSON (a structured clone changes nothing)', async () => {
    const service = serviceWith();
    const created = await service.createLocal({ name: 'work' });
    const ran = await service.execute({ command: 'echo hi', session_id: created.session_id });
    const listed = await service.listSessions();
    const processes = await service.listProcesses({});
    for (const value of [created, ran, listed, processes]) expect(structuredClone(value)).toEqual(value);
    expect(ran).toMatchObject({ status: 'completed', exit_code: 0, session_id: created.session_id });
    expect(listed.sessions.map((s) => s.name)).toContain('work');
    expect(await service.closeSession({ session_id: created.session_id })).toMatchObject({ closed: true });
    expect((await service.checkCommand({ command: 'ls' })).decision).toBe('allow');
  });

  test("the omission notice names the paging operation in the call context's words", async () => {
    const service = serviceWith();
    const neutral = await service.execute({ command: 'print many' });
    expect(neutral.output).toMatch(/; readOutput offset=\d+ to page through them\]/);
    const words = { ...NEUTRAL_VOCABULARY, readOutput: 'conch read' };
    const worded = await service.execute({ command: 'print many' }, { vocabulary: words });
    expect(worded.output).toMatch(/; conch read offset=\d+ to page through them\]/);
  });

  test('connectSsh asks the person through the call context, and says why when nobody can be asked', async () => {
    const question: HostKeyQuestion = {
      host: 'box',
      port: 2222,
      fingerprint: 'SHA256:xyz',
      keyType: 'ssh-ed25519',
      jumpHost: false,
    };
    const verdicts: boolean[] = [];
    const service = serviceWith({
      connect: async (o) => {
        if (o.confirmHostKey) verdicts.push(await o.confirmHostKey(question));
        throw new ConchError(
          ErrorCode.SSH_HOST_KEY_REJECTED,
          'Unknown host key. conch could not ask a person to confirm it.',
          { data: { host: 'box', fingerprint: 'SHA256:xyz', key_type: 'ssh-ed25519' } },
        );
      },
    });
    const asked: ServiceQuestion[] = [];
    await expect(
      service.connectSsh(
        { host: 'box', port: 2222 },
        {
          ask: async (q) => {
            asked.push(q);
            return true;
          },
        },
      ),
    ).rejects.toThrow(/Unknown host key/);
    expect(verdicts).toEqual([true]);
    expect(asked[0]?.message).toContain('Fingerprint: SHA256:xyz');
    expect(asked[0]?.confirm).toBe('Trust ssh-ed25519 key SHA256:xyz for box:2222');

    const refusal = await service
      .connectSsh({ host: 'box' }, { cannotAsk: 'no terminal to ask on' })
      .catch((error: unknown) => error as ConchError);
    expect(refusal).toBeInstanceOf(ConchError);
    expect((refusal as ConchError).message).toContain(
      'conch could not ask a person to confirm it: no terminal to ask on.',
    );
    expect(verdicts).toHaveLength(1);
  });

  test('a connection whose session cannot open is disposed; the driver never leaves the service', async () => {
    let disposed = 0;
    class Failing extends FakeDriver {
      override async dispose(): Promise<void> {
        disposed++;
        await super.dispose();
      }
    }
    const service = serviceWith({
      connect: async (o) => {
        const driver = new Failing({ clock, kind: 'ssh' });
        driver.failOpen = new ConchError(ErrorCode.INTERNAL, 'the remote shell did not start');
        return {
          driver: driver as unknown as SshDriver,
          banner: '',
          hostKeyFingerprint: 'SHA256:abc',
          hostKeyType: 'ssh-ed25519',
          username: 'me',
          host: o.host,
          hostName: o.host,
          port: 22,
          via: [],
        };
      },
    });
    await expect(service.connectSsh({ host: 'box', host_key_policy: 'strict' })).rejects.toThrow(
      /did not start/,
    );
    expect(disposed).toBe(1);
  });

  test('close() kills what the engine started and is idempotent', async () => {
    const service = serviceWith();
    const started = await service.execute({ command: 'sleep 100', background: true });
    expect(started.state).toBe('running');
    const first = service.close();
    expect(service.close()).toBe(first);
    await first;
    await expect(service.execute({ command: 'echo late' })).rejects.toThrow();
  });
});
