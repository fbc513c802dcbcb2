/**
 * The compact form of a terminal screen, used as `output` while a full-screen program (vim, less, top)
 * runs: what a person would read off the screen, without the padding a terminal grid carries.
 */

import type { ScreenSnapshot } from '../driver.js';

/**
 * Renders a screen snapshot compactly: trailing blanks trimmed from every row, leading and trailing empty
 * rows dropped, and each run of empty rows inside collapsed to one empty row.
 */
export function compactScreen(snapshot: Pick<ScreenSnapshot, 'rows'>): string {
  const rows = snapshot.rows.map((row) => row.replace(/\s+$/u, ''));
  let first = 0;
  while (first < rows.length && rows[first] === '') first++;
  let last = rows.length - 1;
  while (last >= first && rows[last] === '') last--;
  const kept: string[] = [];
  for (let i = first; i <= last; i++) {
    const row = rows[i] ?? '';
    if (row === '' && kept[kept.length - 1] === '') continue;
    kept.push(row);
  }
  return kept.join('\n');
}

/**
 * The line a full-screen program's prompt is reported by: the last non-empty row of its screen, with
 * runs of blanks inside it collapsed to one (vim's status line `"x.txt" [New]   0,0-1   All` becomes
 * `"x.txt" [New] 0,0-1 All`), at most 200 characters.
 */
export function screenPromptLine(snapshot: Pick<ScreenSnapshot, 'rows'>): string {
  for (let i = snapshot.rows.length - 1; i >= 0; i--) {
    const row = (snapshot.rows[i] ?? '').replace(/\s+/gu, ' ').trim();
    if (row !== '') return row.slice(0, 200);
  }
  return '';
}
