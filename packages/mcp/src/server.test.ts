import { createRealClock, SessionManager } from '@conch/core';
import { FakeDriver } from '@conch/core/testing';
import { ConchService } from '@conch/service';
import { describe, expect, test } from 'vitest';
import { createConchServer, type ToolRegistrarContext } from './server.js';

describe('createConchServer', () => {
  test('a tool registrar gets the server, the service, the logger and registerTool: nothing live of the engine', async () => {
    const clock = createRealClock();
    const service = new ConchService({ engine: { clock, localDriver: new FakeDriver({ clock }) } });
    let seen: ToolRegistrarContext | undefined;
    const conch = createConchServer({ service, extraTools: [(context) => (seen = context)] });
    try {
      expect(Object.keys(seen ?? {}).sort()).toEqual(['logger', 'registerTool', 'server', 'service']);
      expect(seen?.service).toBe(service);
      // The service exposes methods and plain settings; its engine stays private.
      expect(Object.keys(service)).toEqual([]);
      for (const name of Object.getOwnPropertyNames(ConchService.prototype)) {
        const value = (service as unknown as Record<string, unknown>)[name];
        expect(value).not.toBeInstanceOf(SessionManager);
      }
      expect(Object.keys(conch).sort()).toEqual(['close', 'server', 'service']);
    } finally {
      await conch.close();
    }
  });
});
