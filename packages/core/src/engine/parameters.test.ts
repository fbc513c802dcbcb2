import { describe, expect, it } from 'vitest';
import { ConchError, ErrorCode } from '../errors.js';
import { createFakeEngine } from '../testing/fake-engine.js';
import { DEFAULT_ENGINE_DEFAULTS, DEFAULT_LIMITS } from './limits.js';
import {
  describeRule,
  PARAMETER_RULES,
  type ParameterContext,
  parameterDefault,
  parameterRange,
  resolveParameter,
} from './parameters.js';

const configured: ParameterContext = {
  limits: { ...DEFAULT_LIMITS, maxTimeoutS: 60, maxOutputChars: 5000 },
  defaults: { ...DEFAULT_ENGINE_DEFAULTS, pauseTimeoutS: 2, maxOutputChars: 8000 },
};

function invalid(fn: () => unknown): ConchError {
  try {
    fn();
  } catch (error) {
    if (ConchError.is(error)) return error;
    throw error;
  }
  throw new Error('did not throw');
}

describe('PARAMETER_RULES: one rule per parameter, configured ranges and defaults', () => {
  it('ranges and defaults follow the engine configuration', () => {
    expect(parameterRange(PARAMETER_RULES.pause_timeout, configured)).toEqual({ min: 0, max: 60 });
    expect(parameterDefault(PARAMETER_RULES.pause_timeout, configured)).toBe(2);
    // The default output budget never exceeds the cap.
    expect(parameterDefault(PARAMETER_RULES.max_output_chars, configured)).toBe(5000);
    expect(parameterDefault(PARAMETER_RULES.cols, configured)).toBe(DEFAULT_ENGINE_DEFAULTS.cols);
    expect(parameterRange(PARAMETER_RULES.offset, configured)).toEqual({ min: undefined, max: undefined });
  });

  it('resolveParameter applies the default when the value is absent, and keeps a valid value', () => {
    expect(resolveParameter('pause_timeout', undefined, configured)).toBe(2);
    expect(resolveParameter('pause_timeout', 0.5, configured)).toBe(0.5);
    expect(resolveParameter('view', undefined, configured)).toBe('text');
    expect(resolveParameter('grace_s', undefined, configured)).toBe(DEFAULT_ENGINE_DEFAULTS.killGraceS);
  });

  it.each([
    [
      'pause_timeout',
      61,
      'Invalid pause_timeout: 61.',
      'pause_timeout is seconds, a number from 0 to 60 (default 2).',
    ],
    ['pause_timeout', -1, 'Invalid pause_timeout: -1.', 'from 0 to 60'],
    [
      'max_output_chars',
      99,
      'Invalid max_output_chars: 99.',
      'a whole number from 100 to 5000 (default 5000)',
    ],
    ['length', 1.5, 'Invalid length: 1.5.', 'lines, a whole number from 1 to 100000 (default 1000)'],
    ['cols', 0, 'Invalid cols: 0.', 'columns, a whole number from 1 to 1000 (default 200)'],
    ['view', 'pixels', 'Invalid view: "pixels".', 'one of text, screen, raw (default "text")'],
    ['signal', 'SIGFOO', 'Invalid signal: "SIGFOO".', 'one of SIGTERM, SIGKILL'],
  ] as const)(
    '%s = %j is INVALID_ARGUMENT naming the value and the valid range',
    (name, value, message, hint) => {
      const error = invalid(() => resolveParameter(name, value, configured));
      expect(error.code).toBe(ErrorCode.INVALID_ARGUMENT);
      expect(error.message).toBe(message);
      expect(error.hint).toContain(hint);
    },
  );

  it('describeRule words a rule once for every error', () => {
    expect(describeRule(PARAMETER_RULES.connect_timeout, configured)).toBe(
      'seconds, a number from 0.1 to 3600 (default 20)',
    );
  });
});

describe('the engine applies the rules once, and says what applied', () => {
  const setup = (context: Partial<ParameterContext> = {}) => createFakeEngine(context);

  it('a result that returned for silence carries the pause that applied (the configured default, or the given one)', async () => {
    const { clock, driver, manager } = setup({
      defaults: { pauseTimeoutS: 3 } as ParameterContext['defaults'],
    });
    driver.script('silent', () => {});
    const byDefault = manager.execute({ command: 'silent' });
    await clock.advance(3000);
    expect(await byDefault).toMatchObject({ status: 'partial', reason: 'silence', pause_timeout: 3 });
    const id = (await byDefault).command_id;
    const given = manager.readOutput({ command_id: id, pause_timeout: 0.5 });
    await clock.advance(500);
    expect(await given).toMatchObject({ reason: 'silence', pause_timeout: 0.5 });
    // A screen read answers at once: the pause that applied is 0, not the default.
    const screen = await manager.readOutput({ command_id: id, view: 'screen' });
    expect(screen.pause_timeout).toBeUndefined();
  });

  it('the engine rejects what the rules reject, with the same words', async () => {
    const { manager } = setup({ limits: { maxTimeoutS: 60 } as ParameterContext['limits'] });
    await expect(manager.execute({ command: 'true', pause_timeout: 61 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: 'Invalid pause_timeout: 61.',
      hint: `pause_timeout is seconds, a number from 0 to 60 (default ${DEFAULT_ENGINE_DEFAULTS.pauseTimeoutS}).`,
    });
  });
});
