/**
 * Building the page's elements. Everything shown comes from agents (command texts, session names, cwds) and
 * is set as text, never parsed as HTML.
 */

type Child = Node | string | null | undefined | false;

/** An element with attributes (`class`, `title`, `data-*`, …) and children (strings become text). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes))
    if (value !== undefined) element.setAttribute(name, value);
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return element;
}

/** Replaces the children of `parent`. */
export function fill(parent: Element, ...children: Child[]): void {
  parent.replaceChildren(
    ...children.filter((c): c is Node | string => c !== null && c !== undefined && c !== false),
  );
}
