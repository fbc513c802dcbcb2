import { ConchError, ErrorCode } from '@conch/core';
import { describe, expect, test } from 'vitest';
import * as z from 'zod';
import { errorResult } from './error-result.js';
import { CommandResultShape, outputSchemaFor } from './schemas.js';
import { invalidArgumentFromZod, lenientTwin } from './tool-kit.js';

const strict = z.strictObject({
  command: z.string().min(1).describe('The command to run.'),
  pause_timeout: z.number().min(0).max(3600).optional().meta({ default: 9 }).describe('Seconds of silence.'),
  view: z.enum(['text', 'screen']).optional().describe('Which view.'),
});

describe('lenientTwin', () => {
  test('advertises exactly the strict JSON Schema, without the $schema key', () => {
    const { $schema, ...a } = z.toJSONSchema(strict, { target: 'draft-7', io: 'input' });
    const b = z.toJSONSchema(lenientTwin(strict), { target: 'draft-7', io: 'input' });
    expect($schema).toBeDefined();
    expect(b).toEqual(a);
  });

  test("leaves out zod's safe-integer bounds of an unbounded integer", () => {
    const twin = lenientTwin(z.strictObject({ offset: z.number().int().optional().describe('A line.') }));
    const json = z.toJSONSchema(twin, { target: 'draft-7', io: 'input' }) as {
      properties: Record<string, unknown>;
    };
    expect(json.properties.offset).toEqual({ type: 'integer', description: 'A line.' });
  });

  test('accepts anything, so the strict parse reports the problem', () => {
    expect(lenientTwin(strict).safeParse({ pause_timeout: 'x', extra: 1 }).success).toBe(true);
  });
});

describe('invalidArgumentFromZod', () => {
  const check = (args: unknown) => {
    const parsed = strict.safeParse(args);
    if (parsed.success) throw new Error('expected a failure');
    return invalidArgumentFromZod('execute', strict, parsed.error, args);
  };

  test('names the parameter, the value and the valid range', () => {
    const error = check({ command: 'x', pause_timeout: 5000 });
    expect(error.code).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(error.message).toBe('Invalid arguments for execute: pause_timeout = 5000: must be at most 3600.');
    expect(error.hint).toContain('Seconds of silence');
  });

  test('lists enum values, unknown and missing parameters', () => {
    expect(check({ command: 'x', view: 'pixels' }).message).toContain('must be one of "text", "screen"');
    const unknown = check({ command: 'x', pause_timout: 1 }).message;
    expect(unknown).toContain('unknown parameter "pause_timout"');
    expect(unknown).toContain('valid parameters: command, pause_timeout, view');
    expect(check({}).message).toContain('missing required parameter command');
  });
});

describe('outputSchemaFor', () => {
  const schema = outputSchemaFor(CommandResultShape);

  test('accepts the error shape and rejects an incomplete result', () => {
    expect(schema.safeParse({ error: { code: 'INTERNAL', message: 'boom' } }).success).toBe(true);
    expect(schema.safeParse({ status: 'completed' }).success).toBe(false);
  });

  test('declares, in JSON Schema, either every required result field or error', () => {
    const json = z.toJSONSchema(schema, { target: 'draft-7', io: 'output' }) as {
      anyOf: { required: string[] }[];
    };
    expect([...(json.anyOf[0]?.required ?? [])].sort()).toEqual(
      ['command_id', 'duration_ms', 'output', 'reason', 'session_id', 'state', 'status'].sort(),
    );
    expect(json.anyOf[1]?.required).toEqual(['error']);
  });

  test('is compact JSON: no $schema, no additionalProperties:false, nullable as a type list', () => {
    const json = z.toJSONSchema(schema, { target: 'draft-7', io: 'output' }) as {
      properties: Record<string, Record<string, unknown>>;
    };
    const text = JSON.stringify(json);
    expect(text).not.toContain('$schema');
    expect(text).not.toContain('"additionalProperties":false');
    expect(json.properties.exit_code).toMatchObject({ type: ['integer', 'null'] });
    expect(json.properties.error?.required).toEqual(['code', 'message']);
  });

  test('"types" detail gives each field its type only, and requires nothing (an error validates)', () => {
    const json = z.toJSONSchema(
      outputSchemaFor(CommandResultShape, { detail: 'types', describeError: false }),
      {
        target: 'draft-7',
        io: 'output',
      },
    ) as { properties: Record<string, unknown>; anyOf?: unknown; required?: unknown };
    expect(json.properties.status).toEqual({ type: 'string' });
    expect(json.properties.prompt).toEqual({ type: 'object' });
    expect(json.properties.exit_code).toEqual({ type: ['integer', 'null'] });
    expect(json.properties.error).toEqual({ type: 'object' });
    expect(json.anyOf).toBeUndefined();
    expect(json.required).toBeUndefined();
  });
});

describe('errorResult', () => {
  test('is an isError result with one text block and structuredContent.error', () => {
    const result = errorResult(
      new ConchError(ErrorCode.COMMAND_NOT_FOUND, 'Invalid command_id: "c_x".', {
        hint: 'list_processes shows ids.',
      }),
    );
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([
      {
        type: 'text',
        text: 'Error COMMAND_NOT_FOUND: Invalid command_id: "c_x".\nHint: list_processes shows ids.',
      },
    ]);
    expect(result.structuredContent).toEqual({
      error: {
        code: 'COMMAND_NOT_FOUND',
        message: 'Invalid command_id: "c_x".',
        hint: 'list_processes shows ids.',
      },
    });
  });

  test('wraps unknown throws as INTERNAL', () => {
    const result = errorResult(new Error('kaboom'));
    expect((result.structuredContent as { error: { code: string } }).error.code).toBe('INTERNAL');
  });
});
