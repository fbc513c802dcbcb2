/**
 * How a person's view of a session (`conch attach`, the web page) names an agent's command that runs beside
 * the terminal (isolated): what runs and why, on one line. One wording for every view.
 */

/** What a view is told of an agent's command as it starts. */
export interface AgentCommand {
  text: string;
  isolated: boolean;
  background: boolean;
  held_by_person: boolean;
}

/** Why an agent's isolated command runs beside the terminal, as a view says it. */
export function agentCommandWhy(command: Pick<AgentCommand, 'background' | 'held_by_person'>): string {
  return command.background
    ? 'in the background'
    : command.held_by_person
      ? 'isolated, you hold the terminal'
      : 'isolated';
}

/**
 * The one-line text of an agent command that runs beside the person's terminal: `[agent, WHY] TEXT`, its
 * first line only (` …` when it has more), control characters shown as spaces.
 */
export function agentHeaderText(command: AgentCommand): string {
  const lines = command.text.trim().split(/\r?\n/);
  const text = lines.length > 1 ? `${lines[0]} …` : (lines[0] ?? '');
  return `[agent, ${agentCommandWhy(command)}] ${text}`.replace(/[\u0000-\u001f\u007f]/g, ' ');
}

/** Dim on and off (SGR 2 and 22). */
export const DIM = '\u001b[2m';
export const UNDIM = '\u001b[22m';

/** {@link agentHeaderText} dim, cut to the window's width (for a terminal). */
export function agentHeader(command: AgentCommand, cols: number): string {
  const line = agentHeaderText(command);
  const width = Math.max(10, cols - 1);
  return `${DIM}${line.length > width ? `${line.slice(0, width - 1)}…` : line}${UNDIM}`;
}
