import { findOpencode } from '@conch/delegate';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type ServerHandle, startServer } from './harness.js';

/** Targets for the default profile's listing (characters of JSON). */
const VISIBLE_TARGET = 14_600;
const WHOLE_TARGET = 34_500;
/** The share of the tool-level descriptions (all tools together). */
const DESCRIPTIONS_TARGET = 5_000;

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
  // Listed because an opencode binary is found (the development install's, given with --opencode-bin).
  'delegate_task',
];

describe('tools/list against the built server', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    const opencode = findOpencode();
    if (opencode === undefined) throw new Error('no opencode binary: install the workspace');
    h = await startServer({ args: ['--opencode-bin', opencode] });
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

  test('the listing stays small: the CommandResult paragraph once, lean output schemas, measured sizes', () => {
    // What a model reads (clients such as OpenCode drop output schemas and annotations), and the whole answer.
    const visible = JSON.stringify(
      h.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
    ).length;
    const whole = JSON.stringify({ tools: h.tools }).length;
    const descriptions = h.tools.reduce((sum, t) => sum + (t.description ?? '').length, 0);
    const inputs = h.tools.reduce((sum, t) => sum + JSON.stringify(t.inputSchema).length, 0);
    const outputs = h.tools.reduce((sum, t) => sum + JSON.stringify(t.outputSchema ?? {}).length, 0);
    console.log(
      `tools/list (default profile, ${h.tools.length} tools): model-visible ${visible} chars (target ${VISIBLE_TARGET}), whole ${whole} chars (target ${WHOLE_TARGET}); descriptions ${descriptions} (target ${DESCRIPTIONS_TARGET}), input schemas ${inputs}, output schemas ${outputs}`,
    );
    expect(visible).toBeLessThanOrEqual(VISIBLE_TARGET);
    expect(whole).toBeLessThanOrEqual(WHOLE_TARGET);
    expect(descriptions).toBeLessThanOrEqual(DESCRIPTIONS_TARGET);
    const paragraph = /Result \(CommandResult/;
    expect(h.tools.filter((t) => paragraph.test(t.description ?? '')).map((t) => t.name)).toEqual([
      'execute',
    ]);
    const execute = h.tools.find((t) => t.name === 'execute')!;
    for (const name of ['read_output', 'respond', 'send_control']) {
      const tool = h.tools.find((t) => t.name === name)!;
      expect(tool.description, name).toContain('a CommandResult (see execute)');
      // The same fields as execute's result, each with its type only.
      expect(Object.keys(tool.outputSchema?.properties ?? {})).toEqual(
        Object.keys(execute.outputSchema?.properties ?? {}),
      );
      expect(JSON.stringify(tool.outputSchema), name).not.toMatch(/"(description|enum|required)"/);
    }
  });

  test('output schemas say each definition once, without JSON-schema noise', () => {
    const outputs = h.tools.map((t) => JSON.stringify(t.outputSchema));
    const all = JSON.stringify(h.tools);
    // No $schema key, no zod safe-integer bounds, no additionalProperties:false, no nullable anyOf.
    expect(all).not.toContain('$schema');
    expect(all).not.toContain('9007199254740991');
    expect(outputs.join('\n')).not.toContain('"additionalProperties":false');
    expect(outputs.join('\n')).not.toMatch(/"anyOf":\[\{"type"/);
    // The error shape is described in full once (in the first tool listed); elsewhere it is an object.
    expect(outputs.filter((o) => o.includes('Stable error code')).length).toBe(1);
    expect(h.tools[0]?.outputSchema?.properties?.error).toMatchObject({ required: ['code', 'message'] });
    for (const tool of h.tools.slice(1)) {
      expect(tool.outputSchema?.properties?.error, tool.name).toEqual({ type: 'object' });
    }
    // A Session is described once, under create_local; list_sessions and connect_ssh give its types.
    const describedSession = (o: string) => o.includes('idle = ready');
    expect(
      h.tools.filter((t) => describedSession(JSON.stringify(t.outputSchema))).map((t) => t.name),
    ).toEqual(['create_local']);
  });

  test('descriptions say what is true: log_path, the default session, background instead of &, kill after the end', () => {
    const description = (name: string) => h.tools.find((t) => t.name === name)?.description ?? '';
    const all = h.tools.map((t) => t.description ?? '').join('\n');
    // log_path exists only once the output passed 64 KiB.
    expect(all.match(/log_path/g)?.length).toBe(1);
    expect(description('execute')).toMatch(/past 64 KiB of output, output_info\.log_path/);
    expect(description('execute')).toMatch(/instead of a trailing & or nohup/);
    expect(description('list_sessions')).toMatch(
      /SESSION_CLOSED, except in "default", which the next command recreates/,
    );
    expect(description('kill_process')).toMatch(/also after the command itself ended/);
    expect(description('read_output')).toMatch(/since the previous waiting call/);
    expect(description('read_output')).toMatch(/without moving that cursor/);
    expect(description('read_output')).toMatch(/view "screen" answers at once/);
    const checkSession = (h.tools.find((t) => t.name === 'check_command')?.inputSchema.properties ??
      {}) as Record<string, { description?: string }>;
    expect(checkSession.session_id?.description).toMatch(/the policy is the same in every session/);
  });
});
