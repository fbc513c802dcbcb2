import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type ServerHandle, startServer } from './harness.js';

const TOOLS = [
  'create_local',
  'list_sessions',
  'close_session',
  'execute',
  'read_output',
  'respond',
  'send_control',
  'list_processes',
  'kill_process',
  'check_command',
  'connect_ssh',
  // Listed because an opencode binary is found (the bundled opencode-ai package).
  'delegate_task',
];

describe('tools/list against the built server', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    h = await startServer();
  });
  afterAll(async () => {
    await h?.close();
  });

  test('lists exactly the default-profile tools (delegate_task included when opencode is found), each with an output schema and annotations', () => {
    expect(h.tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
    for (const tool of h.tools) {
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect(tool.annotations, tool.name).toBeDefined();
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
        expect(typeof tool.annotations?.[hint], `${tool.name}.${hint}`).toBe('boolean');
      }
      expect(tool.description?.length ?? 0, tool.name).toBeGreaterThan(150);
      // Every parameter is described.
      const props = (tool.inputSchema.properties ?? {}) as Record<string, { description?: string }>;
      for (const [param, schema] of Object.entries(props)) {
        expect(schema.description?.length ?? 0, `${tool.name}.${param}`).toBeGreaterThan(15);
      }
      // The output schema accepts the error shape too.
      expect(Object.keys(tool.outputSchema?.properties ?? {})).toContain('error');
    }
  });

  test('annotations are true of each tool', () => {
    const ann = Object.fromEntries(h.tools.map((t) => [t.name, t.annotations]));
    for (const name of ['list_sessions', 'read_output', 'list_processes', 'check_command']) {
      expect(ann[name]?.readOnlyHint, name).toBe(true);
    }
    for (const name of ['execute', 'kill_process', 'close_session', 'respond', 'send_control']) {
      expect(ann[name]?.destructiveHint, name).toBe(true);
      expect(ann[name]?.readOnlyHint, name).toBe(false);
    }
    for (const name of ['execute', 'respond', 'send_control'])
      expect(ann[name]?.openWorldHint, name).toBe(true);
    expect(ann.execute?.idempotentHint).toBe(false);
  });

  test('execute documents the waiting rules and the defaults', () => {
    const execute = h.tools.find((t) => t.name === 'execute')!;
    const props = execute.inputSchema.properties as Record<
      string,
      { description: string; default?: unknown; maximum?: number }
    >;
    expect(execute.inputSchema.required).toEqual(['command']);
    expect(execute.inputSchema.additionalProperties).toBe(false);
    expect(props.pause_timeout?.description).toMatch(/silence/i);
    expect(props.pause_timeout?.default).toBe(9);
    expect(props.pause_timeout?.maximum).toBe(3600);
    expect(props.total_timeout?.description).toMatch(/only while output/i);
    expect(props.total_timeout?.default).toBe(20);
    expect(execute.description).toMatch(/read_output/);
    expect(execute.description).toMatch(/partial/);
  });

  test('the server sends instructions', () => {
    const instructions = h.client.getInstructions() ?? '';
    expect(instructions).toMatch(/default/);
    expect(instructions).toMatch(/partial/);
    expect(instructions).toMatch(/respond/);
    expect(instructions).toMatch(/background/);
  });
});
