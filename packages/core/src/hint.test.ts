import { describe, expect, test } from 'vitest';
import { ConchError, ErrorCode } from './errors.js';
import { hint, NEUTRAL_VOCABULARY, VERBS, type Vocabulary, verb, wordHint } from './hint.js';

const TOOLS: Vocabulary = Object.fromEntries(VERBS.map((v) => [v, `tool_${v}`])) as Vocabulary;

describe('face-neutral hints', () => {
  test('a hint keeps verb references apart from its text and merges adjacent text', () => {
    const parts = hint`Free one with ${verb('killProcess')} (${'3'} running; ${verb('listProcesses')} shows them).`;
    expect(parts).toEqual([
      'Free one with ',
      { verb: 'killProcess' },
      ' (3 running; ',
      { verb: 'listProcesses' },
      ' shows them).',
    ]);
    expect(wordHint(parts, TOOLS)).toBe(
      'Free one with tool_killProcess (3 running; tool_listProcesses shows them).',
    );
  });

  test('a ConchError words its hint per face; plain text hints stay as given', () => {
    const error = new ConchError(ErrorCode.LIMIT_REACHED, 'Too many.', {
      hint: hint`Use ${verb('killProcess')}.`,
    });
    expect(error.hintParts).toEqual(['Use ', { verb: 'killProcess' }, '.']);
    expect(error.hintIn(TOOLS)).toBe('Use tool_killProcess.');
    expect(error.toJSON(TOOLS).hint).toBe('Use tool_killProcess.');
    expect(error.hint).toBe(`Use ${NEUTRAL_VOCABULARY.killProcess}.`);
    const plain = new ConchError(ErrorCode.INVALID_ARGUMENT, 'Bad.', { hint: 'Give a shell command.' });
    expect(plain.toJSON(TOOLS).hint).toBe('Give a shell command.');
    expect(new ConchError(ErrorCode.INTERNAL, 'x').toJSON(TOOLS)).not.toHaveProperty('hint');
  });

  test('no hint raised by core names a face word: every verb mention is a reference', () => {
    // The MCP tool names must not appear as literal text in a hint built with `hint`.
    const parts = hint`Reconnect with ${verb('connectSsh')}; ${verb('closeSession')} removes the lost session.`;
    const text = parts.filter((p) => typeof p === 'string').join('');
    expect(text).not.toMatch(/connect_ssh|close_session/);
  });
});
