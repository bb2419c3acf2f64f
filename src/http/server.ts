import http, { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http'
import { randomUUID } from 'node:crypto'
import type { AddressInfo, Socket } from 'node:net'
import { createRouter } from './router.ts'
import { BodyCutOff, EMPTY, giveBack, parseBody, rawBody, readBody } from './body.ts'
import { HttpError, notFound } from './http-error.ts'
import { errorReply, send, type OutageLog } from './respond.ts'
import { createCors, type Cors, type CorsOptions } from './cors.ts'
import type { AccessLogEntry, Ctx, Reply, Route } from './types.ts'

export interface ServerOptions {
  readonly routes: readonly Route[]
  readonly maxBodyBytes: number
  readonly headersTimeoutMs: number
  readonly requestTimeoutMs: number
  readonly keepAliveTimeoutMs: number
  /** Called once per answered request: the access log and the metrics hang off it. */
  readonly onResponse: (entry: AccessLogEntry) => void
  readonly logError: (entry: object) => void
  /** Which origins may call which paths from a browser (C13); none when absent. */
  readonly cors?: CorsOptions | undefined
}

export interface RunningServer {
  readonly server: http.Server
  readonly url: string
  /** Stop accepting, let in-flight requests finish (at most `graceMs`), close kept-alive sockets. */
  close(graceMs: number): Promise<void>
}

/**
 * A request as handlers see it. A class, not an object literal: a literal with a getter gets a
 * hidden class of its own for every request, allocated in the old generation, and under load
 * that garbage cost a full collection (5 ms pause) every second (issue 6).
 */
export class RequestCtx implements Ctx {
  readonly req: IncomingMessage
  readonly method: string
  readonly path: string
  readonly route: string
  readonly params: Readonly<Record<string, string>>
  readonly rawBody: Buffer
  readonly requestId: string
  userId: number | null = null
  private readonly search: string
  private parsedQuery: URLSearchParams | undefined = undefined
  private readonly parsed: { kind: Ctx['bodyKind']; value: unknown }
  private readonly refusal: HttpError | undefined

  /** `body` is the parsed body, or the refusal (400, 415) its parsing gave, answered only when asked for. */
  constructor(req: IncomingMessage, match: { route: string; params: Readonly<Record<string, string>> }, method: string, path: string, search: string,
    body: { kind: Ctx['bodyKind']; value: unknown } | HttpError, rawBody: Buffer, requestId: string) {
    this.req = req
    this.method = method
    this.path = path
    this.route = match.route
    this.params = match.params
    this.search = search
    this.parsed = body instanceof HttpError ? NO_BODY : body
    this.refusal = body instanceof HttpError ? body : undefined
    this.rawBody = rawBody
    this.requestId = requestId
  }

  get body(): unknown {
    this.checkBody()
    return this.parsed.value
  }

  get bodyKind(): Ctx['bodyKind'] {
    this.checkBody()
    return this.parsed.kind
  }

  get bodyRefused(): boolean {
    return this.refusal !== undefined
  }

  checkBody(): void {
    if (this.refusal !== undefined) throw this.refusal
  }

  // Parsed on first use: most routes never look at the query string.
  get query(): URLSearchParams {
    this.parsedQuery ??= new URLSearchParams(this.search)
    return this.parsedQuery
  }
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/

const NO_BODY = { kind: 'none', value: undefined } as const

/** The parsed body, or the refusal its parsing gave (C1: 400, 415), for RequestCtx to answer when read. */
function bodyOf(own: Route[3], contentType: string | undefined, raw: Buffer): { kind: Ctx['bodyKind']; value: unknown } | HttpError {
  try {
    return own?.rawBodyType === undefined ? parseBody(contentType, raw) : rawBody(own.rawBodyType, contentType, raw)
  } catch (err) {
    if (err instanceof HttpError) return err
    throw err
  }
}

export function createHttpServer(options: ServerOptions): { server: http.Server; draining: () => void } {
  const route = createRouter(options.routes)
  const cors = options.cors ? createCors(options.cors) : undefined
  let closing = false
  // Sockets whose request our time-out cut off: the handler whose body read that cut off logs 408.
  const timedOut = new WeakSet<object>()
  const outages: OutageLog = { loggedSince: undefined }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now()
    const header = req.headers['x-request-id']
    const requestId = typeof header === 'string' && SANE_REQUEST_ID.test(header) ? header : randomUUID()
    const url = req.url ?? '/'
    const q = url.indexOf('?')
    const path = q === -1 ? url : url.slice(0, q)
    const method = req.method ?? 'GET'
    const match = route(method, path)
    let template = match.kind === 'found' ? match.route : match.kind === 'not_found' ? 'unmatched' : path
    const origin = cors === undefined ? undefined : cors.allowedOrigin(path, req.headers.origin)
    if (cors !== undefined && origin !== undefined && method === 'OPTIONS' && match.kind === 'method_not_allowed' &&
      req.headers['access-control-request-method'] !== undefined) {
      // A preflight carries no credentials: it is answered here, before any handler authenticates.
      // Its methods are the router's Allow list for the path, so no second route table exists.
      const headers: Record<string, string> = { ...cors.preflightHeaders(origin, match.allow), 'x-request-id': requestId }
      if (closing) headers['connection'] = 'close'
      res.writeHead(204, headers).end()
      options.onResponse({ method, route: 'preflight', status: 204, ms: Math.round((performance.now() - started) * 1000) / 1000, request_id: requestId, user_id: null })
      return
    }
    let userId: number | null = null
    let reply: Reply
    let raw: Buffer = EMPTY
    let handled = false
    try {
      if (match.kind === 'not_found') throw notFound()
      if (match.kind === 'method_not_allowed') {
        template = 'unmatched'
        throw new HttpError(405, { error: `Method ${method} is not allowed here` }, { allow: match.allow })
      }
      const own = match.options
      const search = q === -1 ? '' : url.slice(q + 1)
      // A route's own checks before its body (an import's megabytes): refused callers are never buffered.
      if (own?.beforeBody) await own.beforeBody(new RequestCtx(req, match, method, path, search, NO_BODY, EMPTY, requestId))
      raw = method === 'GET' || method === 'HEAD' ? EMPTY : await readBody(req, own?.maxBodyBytes ?? options.maxBodyBytes)
      // A body that cannot be parsed is refused when the handler reads it, not here: C2's order
      // puts authentication, the record's 404 and its owner's 401 before anything of the body.
      // A handler that never reads it still gets the refusal (the endpoint kit checks it before
      // a unit commits; here, after the handler).
      const ctx = new RequestCtx(req, match, method, path, search, bodyOf(own, req.headers['content-type'], raw), raw, requestId)
      handled = true
      try {
        reply = await match.handler(ctx)
      } finally {
        userId = ctx.userId
      }
      // The refusal of a body the handler never read is answered as one before the handler.
      handled = false
      ctx.checkBody()
    } catch (err) {
      // Only a body read that was cut off (by our time-out, or its client went away) is no bug:
      // logged as 408 (we cut it) or 499 (nginx's "client closed request"), never as a 500. The
      // state of `req` says nothing here: a body taken from node:http's buffer, or a handler that
      // threw before node:http parsed the request's end, leaves `req.complete` false (issue 15).
      reply = err instanceof BodyCutOff
        ? { status: timedOut.has(req.socket) ? 408 : 499, body: null }
        : errorReply(err, requestId, options.logError, outages)
      const early = !handled && match.kind === 'found' ? match.options?.earlyAnswerHeaders?.(req) : undefined
      if (early !== undefined) reply = { ...reply, headers: { ...reply.headers, ...early } }
    }
    let status = reply.status
    if (!res.headersSent && !res.destroyed) {
      const acceptEncoding = req.headers['accept-encoding']
      try {
        // Most answers are written at once; a compressed or streamed one settles later.
        const sending = send(res, withCors(cors, origin, reply), requestId, closing, acceptEncoding)
        if (sending !== undefined) {
          const ended = await sending
          // A stream cut off by its client (499), or broken by a failing read: the status was
          // sent long ago, so the connection was cut, and the failure is logged as the 500 it is.
          if (ended !== undefined) status = ended.status
          if (ended?.error !== undefined) errorReply(ended.error, requestId, options.logError, outages)
        }
      } catch (err) {
        // A reply that cannot be sent (a body JSON cannot encode, a bad header value) is a bug
        // like any other: C1's 500, logged with the request id, instead of an empty answer.
        reply = errorReply(err, requestId, options.logError, outages)
        status = reply.status
        if (!res.headersSent) send(res, withCors(cors, origin, reply), requestId, closing)
      }
    }
    // Answered: nothing reads the body any more, and a large one goes back now, not at some GC.
    giveBack(raw)
    options.onResponse({
      method,
      route: template,
      status,
      ms: Math.round((performance.now() - started) * 1000) / 1000,
      request_id: requestId,
      user_id: userId,
    })
  }

  const server = http.createServer(
    {
      headersTimeout: options.headersTimeoutMs,
      requestTimeout: options.requestTimeoutMs,
      keepAliveTimeout: options.keepAliveTimeoutMs,
      // Node enforces both time-outs from a periodic sweep (30 s by default): sweep often enough
      // that a slow client is cut off close to its time-out, not up to 30 s later.
      connectionsCheckingInterval: Math.min(1000, options.headersTimeoutMs),
    },
    (req, res) => {
      handle(req, res).catch((err: unknown) => {
        // Only what runs after the answer is sent (onResponse) can get here: log it, with its stack.
        options.logError({ time: new Date().toISOString(), level: 'error', message: String(err), stack: err instanceof Error ? err.stack : undefined })
        if (!res.headersSent) res.writeHead(500).end()
      })
    },
  )
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400
    if (status === 408) timedOut.add(socket)
    // Node answers these in plain text unless someone listens; we listen so that they are JSON
    // too (C1). A reset socket, or one whose answer has begun, gets nothing more.
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent === true) {
      socket.destroy()
      return
    }
    const requestId = randomUUID()
    const body = JSON.stringify({ error: CLIENT_ERRORS[status] })
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`,
    )
    socket.destroySoon()
    // A request already handed to a handler is logged by it; one cut off before that is logged here.
    if (!inFlight) options.onResponse({ method: '-', route: 'unmatched', status, ms: 0, request_id: requestId, user_id: null })
  })
  return { server, draining: () => { closing = true } }
}

/** Every answer to a listed origin under the prefix carries the CORS headers, errors included (C13). */
function withCors(cors: Cors | undefined, origin: string | undefined, reply: Reply): Reply {
  return cors === undefined || origin === undefined ? reply : cors.decorate(reply, origin)
}

const CLIENT_ERRORS: Readonly<Record<number, string>> = {
  400: 'Bad request',
  408: 'Request timeout: the request was not received in time',
  431: 'Request header fields too large',
}

export function listen(options: ServerOptions, host: string, port: number): Promise<RunningServer> {
  const { server, draining } = createHttpServer(options)
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      const address = server.address() as AddressInfo
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address
      resolve({
        server,
        url: `http://${shownHost}:${address.port}`,
        close: (graceMs) =>
          new Promise<void>((done) => {
            draining()
            const force = setTimeout(() => server.closeAllConnections(), graceMs)
            force.unref()
            server.close(() => {
              clearTimeout(force)
              done()
            })
            server.closeIdleConnections()
          }),
      })
    })
  })
}
