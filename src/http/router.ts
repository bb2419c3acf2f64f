import type { Handler, Method, Route, RouteOptions } from './types.ts'

/** A route lookup answers with a handler, the methods a known path allows (405), or nothing (404). */
export type Match =
  | { readonly kind: 'found'; readonly handler: Handler; readonly route: string; readonly params: Record<string, string>; readonly options?: RouteOptions | undefined }
  | { readonly kind: 'method_not_allowed'; readonly allow: string }
  | { readonly kind: 'not_found' }

interface CompiledPath {
  readonly template: string
  readonly segments: readonly string[]
  readonly handlers: Map<string, Handler>
  /** Per method, the route's own body handling (most routes have none). */
  readonly options: Map<string, RouteOptions>
  /** Methods added for another (PUT for PATCH): a route may still define them itself. */
  readonly implicit: Set<string>
}

const NOT_FOUND: Match = { kind: 'not_found' }

/**
 * Static paths are looked up in a map; templated ones (`:id`) are compared segment by segment
 * among those with the same number of segments. The tables are small (dozens of routes), so
 * this beats a regex per route and keeps 404/405 one lookup.
 */
export function createRouter(routes: readonly Route[]): (method: string, path: string) => Match {
  const staticPaths = new Map<string, CompiledPath>()
  const byLength = new Map<number, CompiledPath[]>()
  const all = new Map<string, CompiledPath>()

  for (const [method, template, handler, options] of routes) {
    let compiled = all.get(template)
    if (!compiled) {
      compiled = { template, segments: template.split('/').slice(1), handlers: new Map(), options: new Map(), implicit: new Set() }
      all.set(template, compiled)
      if (template.includes('/:')) {
        const list = byLength.get(compiled.segments.length) ?? []
        list.push(compiled)
        byLength.set(compiled.segments.length, list)
      } else {
        staticPaths.set(template, compiled)
      }
    }
    addMethod(compiled, method, handler)
    if (options) {
      compiled.options.set(method, options)
      if (method === 'PATCH' && compiled.implicit.has('PUT')) compiled.options.set('PUT', options)
    }
  }
  const allowOf = new Map<CompiledPath, string>()
  for (const compiled of all.values()) allowOf.set(compiled, [...compiled.handlers.keys()].sort().join(', '))

  return (method, rawPath) => {
    const path = rawPath.length > 1 && rawPath.endsWith('/') ? rawPath.slice(0, -1) : rawPath
    const wanted = method === 'HEAD' ? 'GET' : method
    const exact = staticPaths.get(path)
    if (exact) {
      const handler = exact.handlers.get(wanted)
      if (handler) return { kind: 'found', handler, route: exact.template, params: {}, options: exact.options.get(wanted) }
    }
    // Every template of this shape is tried: `/a/:id/b` (GET) must not hide `/a/x/:name` (POST).
    const segments = path.split('/').slice(1)
    const matched: CompiledPath[] = exact ? [exact] : []
    for (const candidate of byLength.get(segments.length) ?? []) {
      const params = matchSegments(candidate.segments, segments)
      if (!params) continue
      const handler = candidate.handlers.get(wanted)
      if (handler) return { kind: 'found', handler, route: candidate.template, params, options: candidate.options.get(wanted) }
      matched.push(candidate)
    }
    if (matched.length === 0) return NOT_FOUND
    if (matched.length === 1) return { kind: 'method_not_allowed', allow: allowOf.get(matched[0] as CompiledPath) ?? '' }
    const allow = new Set(matched.flatMap((c) => [...c.handlers.keys()]))
    return { kind: 'method_not_allowed', allow: [...allow].sort().join(', ') }
  }
}

function addMethod(compiled: CompiledPath, method: Method, handler: Handler): void {
  if (compiled.handlers.has(method) && !compiled.implicit.has(method)) throw new Error(`duplicate route ${method} ${compiled.template}`)
  compiled.handlers.set(method, handler)
  compiled.implicit.delete(method)
  // Rails `resources` routes PUT and PATCH to the same update action (C1), unless PUT has its own.
  if (method === 'PATCH' && !compiled.handlers.has('PUT')) {
    compiled.handlers.set('PUT', handler)
    compiled.implicit.add('PUT')
  }
}

function matchSegments(template: readonly string[], actual: readonly string[]): Record<string, string> | null {
  let params: Record<string, string> | null = null
  for (let i = 0; i < template.length; i++) {
    const want = template[i] as string
    const got = actual[i] as string
    if (want.charCodeAt(0) === 58 /* ':' */) {
      if (got.length === 0) return null
      params ??= {}
      params[want.slice(1)] = safeDecode(got)
    } else if (want !== got) {
      return null
    }
  }
  return params ?? {}
}

function safeDecode(segment: string): string {
  if (!segment.includes('%')) return segment
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}
