/**
 * Pages are built from nodes, never from HTML text: every value an API answers (an email, an
 * item's name, an address) becomes a text node, so nothing it holds can run as markup.
 */
export type Child = Node | string | number | null | undefined | false | readonly Child[]
type AttrValue = string | number | boolean | null | undefined | EventListener
export type Attrs = Record<string, AttrValue>

function append(parent: Node, child: Child): void {
  if (child === null || child === undefined || child === false) return
  if (Array.isArray(child)) {
    for (const c of child as readonly Child[]) append(parent, c)
    return
  }
  parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)))
}

/** `h('button', {type: 'button', onclick: f}, 'Skip')`: attributes (true → present), listeners (`on…`), children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue
    if (typeof value === 'function') el.addEventListener(name.slice(2).toLowerCase(), value)
    else el.setAttribute(name, value === true ? '' : String(value))
  }
  append(el, children)
  return el
}

/** Replaces everything inside `parent`. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren()
  append(parent, children)
}

/** Ids unique on the page, for label/for and aria-labelledby pairs. */
let counter = 0
export function uid(prefix: string): string {
  return `${prefix}-${++counter}`
}

/** The value of a form control by name, trimmed. */
export function field(form: HTMLFormElement, name: string): string {
  const el = form.elements.namedItem(name)
  return el instanceof HTMLInputElement || el instanceof HTMLSelectElement || el instanceof HTMLTextAreaElement ? el.value.trim() : ''
}
