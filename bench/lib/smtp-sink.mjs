/**
 * A local SMTP sink for bench/mail.mjs (its own process, pinned beside the load): takes every
 * message (250), keeps nothing but a count, the Message-IDs seen (to count repeats) and the first
 * and last arrival. Plain SMTP, no STARTTLS: what a relay on the same host (Postfix on
 * 127.0.0.1:25) offers. Prints `smtp on <port>` and `listening on http://127.0.0.1:<port>`, the
 * latter a control port: GET /count → {count, distinct, first_ms, last_ms, smtp_port}, POST /reset.
 */
import http from 'node:http'
import { SMTPServer } from 'smtp-server'

let count = 0
let firstMs = null
let lastMs = null
const seen = new Set()

const smtp = new SMTPServer({
  logger: false,
  disableReverseLookup: true,
  authOptional: true,
  hideSTARTTLS: true,
  closeTimeout: 100,
  maxClients: 64,
  onData(stream, _session, callback) {
    let head = ''
    stream.on('data', (chunk) => {
      if (head.length < 4096) head += chunk.toString('latin1')
    })
    stream.on('end', () => {
      const id = /^message-id:\s*(\S+)/im.exec(head)?.[1]
      if (id) seen.add(id)
      count++
      const now = Date.now()
      firstMs ??= now
      lastMs = now
      callback(null, `2.0.0 Ok: queued as sink-${count}`)
    })
  },
})

smtp.listen(0, '127.0.0.1', () => {
  const control = http.createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/reset') {
      count = 0
      firstMs = null
      lastMs = null
      seen.clear()
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ count, distinct: seen.size, first_ms: firstMs, last_ms: lastMs, smtp_port: smtp.server.address().port }))
  })
  control.listen(0, '127.0.0.1', () => {
    process.stdout.write(`smtp on ${smtp.server.address().port}\nlistening on http://127.0.0.1:${control.address().port}\n`)
  })
})
process.on('SIGTERM', () => process.exit(0))
