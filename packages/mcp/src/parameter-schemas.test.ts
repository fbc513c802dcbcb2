import { createRealClock, ErrorCode } from '@conch/core';
import { ConchService, VERB_PARAMETERS } from '@conch/service';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, test } from 'vitest';
import * as z from 'zod';
import { zodParameter, zodShapeFor } from './parameter-schemas.js';
import { COMPAT_PROFILES } from './profiles.js';
import { createConchServer } from './server.js';
import { invalidArgumentFromZod } from './tool-kit.js';
import { DEFAULT_TOOL_NAMES } from './tools.js';

/** An engine configured away from the built-in defaults, so that a literal anywhere would show. */
const service = new ConchService({
  engine: {
    clock: createRealClock(),
    limits: { maxTimeoutS: 120, maxOutputChars: 50_000, maxCols: 300 },
    defaults: { pauseTimeoutS: 4, totalTimeoutS: 11, maxOutputChars: 12_000, killGraceS: 2 },
  },
});

function json(schema: z.ZodType): Record<string, unknown> {
  return z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
}

describe('the MCP input schemas are derived from the parameter table', () => {
  test('ranges and defaults are the engine configuration, not literals', () => {
    const shape = zodShapeFor('execute', service);
    expect(json(shape.pause_timeout)).toMatchObject({ minimum: 0, maximum: 120, default: 4 });
    expect(json(shape.total_timeout)).toMatchObject({ maximum: 120, default: 11 });
    expect(json(shape.max_output_chars)).toMatchObject({ minimum: 100, maximum: 50_000, default: 12_000 });
    expect(json(zodShapeFor('create_local', service).cols)).toMatchObject({ maximum: 300, default: 200 });
    expect(json(zodShapeFor('kill_process', service).grace_s)).toMatchObject({ maximum: 300, default: 2 });
  });

  test('descriptions do not repeat what the schema says (range, default, type)', () => {
    for (const [verb, params] of Object.entries(VERB_PARAMETERS)) {
      for (const name of Object.keys(params)) {
        const description = json(zodParameter(verb as keyof typeof VERB_PARAMETERS, name as never, service))
          .description as string;
        expect(description.length, `${verb}.${name}`).toBeGreaterThan(15);
        expect(description, `${verb}.${name}`).not.toMatch(
          /\bdefault (\d|true|false|")|\b\d+-\d+\b|\bFloat\b|\bat most \d/i,
        );
      }
    }
  });

  test('a derived schema rejects an out-of-range value: INVALID_ARGUMENT naming the value and the range', () => {
    const strict = z.strictObject(zodShapeFor('execute', service));
    const args = { command: 'true', pause_timeout: 500 };
    const parsed = strict.safeParse(args);
    expect(parsed.success).toBe(false);
    const error = invalidArgumentFromZod('execute', strict, parsed.error!, args);
    expect(error.code).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(error.message).toBe('Invalid arguments for execute: pause_timeout = 500: must be at most 120.');
    expect(String(error.hint)).toContain('(from 0 to 120, default 4)');
  });

  test('a length limit is checked though not listed', () => {
    const strict = z.strictObject(zodShapeFor('read_output', service));
    const args = { command_id: 'x'.repeat(201) };
    const parsed = strict.safeParse(args);
    expect(parsed.success).toBe(false);
    expect(invalidArgumentFromZod('read_output', strict, parsed.error!, args).message).toContain(
      'must be 1 to 200 characters long',
    );
    expect(json(strict.shape.command_id)).not.toHaveProperty('maxLength');
  });

  test('a profile override changes the default and the description, not the type or the range', () => {
    const pause = json(
      zodParameter('execute', 'pause_timeout', service, {
        default: 30,
        description: 'The original words here.',
      }),
    );
    expect(pause).toMatchObject({ type: 'number', minimum: 0, maximum: 120, default: 30 });
    expect(pause.description).toBe('The original words here.');
  });

  test('tools/list: every default tool lists exactly its table parameters, in order', async () => {
    const conch = createConchServer({ service });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await conch.server.connect(serverSide);
    const client = new Client({ name: 'unit', version: '0' });
    await client.connect(clientSide);
    try {
      const { tools } = await client.listTools();
      for (const name of DEFAULT_TOOL_NAMES) {
        const tool = tools.find((t) => t.name === name)!;
        expect(Object.keys(tool.inputSchema.properties ?? {}), name).toEqual(
          Object.keys(VERB_PARAMETERS[name]),
        );
        const required = Object.entries(VERB_PARAMETERS[name] as Record<string, { required?: boolean }>)
          .filter(([, d]) => d.required)
          .map(([n]) => n);
        expect(tool.inputSchema.required ?? [], name).toEqual(required);
      }
    } finally {
      await client.close();
      await conch.close();
    }
  });
});

describe('tool descriptions say the configured retention of ended commands', () => {
  test('read_output and list_processes word retainMs and retainFinished as configured', async () => {
    const kept = new ConchService({
      engine: { clock: createRealClock(), limits: { retainMs: 10 * 60_000, retainFinished: 50 } },
    });
    const conch = createConchServer({ service: kept });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await conch.server.connect(serverSide);
    const client = new Client({ name: 'unit', version: '0' });
    await client.connect(clientSide);
    try {
      const { tools } = await client.listTools();
      const description = (name: string) => tools.find((t) => t.name === name)?.description ?? '';
      expect(description('read_output')).toContain('Ended commands stay readable 10 min.');
      expect(description('list_processes')).toContain('Ended commands stay listed for 10 min (newest 50)');
    } finally {
      await client.close();
      await conch.close();
    }
  });
});

describe("profiles map their parameters onto the table: the type and range are the table's", () => {
  /** The JSON schema of a profile tool's parameter. */
  function profileParam(profile: keyof typeof COMPAT_PROFILES, tool: string, param: string) {
    const definition = COMPAT_PROFILES[profile].tools(service).find((t) => t.name === tool);
    if (!definition) throw new Error(`${profile} has no tool ${tool}`);
    return json((definition.input.shape as Record<string, z.ZodType>)[param]!);
  }
  const table = (verb: keyof typeof VERB_PARAMETERS, name: string) =>
    json(zodParameter(verb, name as never, service));

  test.each([
    ['interminal', 'execute', 'pause_timeout', 'execute', 'pause_timeout', 9],
    ['interminal', 'read_output', 'total_timeout', 'execute', 'total_timeout', 20],
    ['astonish', 'shell_command', 'timeout', 'execute', 'total_timeout', 120],
    ['astonish', 'shell_command', 'background', 'execute', 'background', false],
    ['desktop-commander', 'read_process_output', 'offset', 'read_output', 'offset', 0],
    ['desktop-commander', 'read_process_output', 'length', 'read_output', 'length', 1000],
    ['ollama-code', 'run_shell_command', 'is_background', 'execute', 'background', false],
  ] as const)(
    '%s %s.%s = %s.%s with the original default %j',
    (profile, tool, param, verb, name, fallback) => {
      const mine = profileParam(profile, tool, param);
      const theirs = table(verb, name);
      for (const key of ['type', 'minimum', 'maximum', 'enum'] as const)
        expect(mine[key], key).toEqual(theirs[key]);
      expect(mine.default).toBe(fallback);
    },
  );
});
