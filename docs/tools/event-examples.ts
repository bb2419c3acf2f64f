/**
 * Prints docs/webhooks.md's event catalogue examples: one real event per type, as
 * `GET /admin/api/v1/events` renders it (the body a webhook delivery posts), pretty-printed.
 * It runs test/docs/every-event-type.ts's lifecycle on a throwaway server and database, today
 * being the real date. Run `npx tsx docs/tools/event-examples.ts > /tmp/examples.md`, then paste
 * each JSON block under its `#### <type>` heading in the doc's catalogue.
 * test/docs/webhooks-doc.test.ts checks that the pasted ones still have the product's fields.
 */
import { EVENT_TYPES } from '../../src/domain/events.ts'
import { startTestServer } from '../../test/helpers/server.ts'
import { allEvents, lifecycleEnv, writeEveryEventType } from '../../test/docs/every-event-type.ts'

const today = new Date().toISOString().slice(0, 10)
const server = await startTestServer(undefined, lifecycleEnv(today))
try {
  await writeEveryEventType(server, today)
  const events = await allEvents(server)
  for (const type of EVENT_TYPES) {
    const event = events.find((e) => e.type === type)
    if (!event) throw new Error(`the lifecycle wrote no ${type} event`)
    process.stdout.write(`#### ${type}\n\n\`\`\`json\n${JSON.stringify(event, null, 2)}\n\`\`\`\n\n`)
  }
} finally {
  await server.close()
}
