import { describe, expect, it } from 'vitest';
import type { CommandResult } from '../types.js';
import { leanCommandResult } from './lean-result.js';

const base: CommandResult = {
  status: 'completed',
  command_id: 'c_aaaaaaaaaa',
  session_id: 'default',
  output: '',
  exit_code: 0,
  signal: null,
  state: 'exited',
  reason: 'exited',
  cwd: '/tmp',
  duration_ms: 9,
  output_info: { bytes_total: 0, lines_total: 0, truncated: false, omitted_lines: 0 },
};

describe('leanCommandResult', () => {
  it('drops a null signal and the output_info of output that was not cut, in the original key order', () => {
    const lean = leanCommandResult(base);
    expect(lean).toEqual({
      status: 'completed',
      command_id: 'c_aaaaaaaaaa',
      session_id: 'default',
      output: '',
      exit_code: 0,
      state: 'exited',
      reason: 'exited',
      cwd: '/tmp',
      duration_ms: 9,
    });
    expect(Object.keys(lean)).toEqual([
      'status',
      'command_id',
      'session_id',
      'output',
      'exit_code',
      'state',
      'reason',
      'cwd',
      'duration_ms',
    ]);
  });

  it('keeps a signal, isolated:true, and output_info when the output was cut', () => {
    const info = { bytes_total: 9, lines_total: 3, truncated: true, omitted_lines: 1, log_path: '/x' };
    const lean = leanCommandResult({
      ...base,
      exit_code: 130,
      signal: 'SIGINT',
      isolated: true,
      output_info: info,
    });
    expect(lean).toMatchObject({ exit_code: 130, signal: 'SIGINT', isolated: true, output_info: info });
  });

  it('drops isolated:false but keeps exit_code null (unknown) on a completed command', () => {
    const lean = leanCommandResult({ ...base, exit_code: null, isolated: false, state: 'lost' });
    expect(lean).not.toHaveProperty('isolated');
    expect(lean.exit_code).toBeNull();
    const noCode: CommandResult = { ...base };
    delete noCode.exit_code;
    expect(leanCommandResult(noCode).exit_code).toBeNull();
  });

  it('gives a partial result no exit_code and keeps its prompt', () => {
    const partial: CommandResult = {
      status: 'partial',
      command_id: 'c_bbbbbbbbbb',
      session_id: 's_x',
      output: 'Password: ',
      state: 'awaiting_input',
      reason: 'awaiting_input',
      prompt: { kind: 'password', text: 'Password: ' },
      duration_ms: 300,
      output_info: { bytes_total: 10, lines_total: 1, truncated: false, omitted_lines: 0 },
    };
    expect(leanCommandResult(partial)).toEqual({
      status: 'partial',
      command_id: 'c_bbbbbbbbbb',
      session_id: 's_x',
      output: 'Password: ',
      state: 'awaiting_input',
      reason: 'awaiting_input',
      prompt: { kind: 'password', text: 'Password: ' },
      duration_ms: 300,
    });
  });
});
