import type { DatabaseSync } from 'node:sqlite'

/**
 * Forward-only migrations, compiled into the binary (the SEA ships no asset files). Each is
 * applied in its own transaction and recorded in `schema_migrations`; `PRAGMA user_version` is
 * the highest applied. Versions are applied by what is missing, not by what is above the highest:
 * migrations written side by side may land in any order (a database that got 14 before 12
 * existed gets 12 when it arrives), so each must stand on its own.
 */
export interface Migration {
  readonly version: number
  readonly name: string
  readonly sql: string
}

export class DatabaseTooNewError extends Error {
  override readonly name = 'DatabaseTooNewError'
  readonly databaseVersion: number
  readonly binaryVersion: number
  constructor(databaseVersion: number, binaryVersion: number) {
    super(
      `its schema is version ${databaseVersion}, newer than this replenish understands (version ${binaryVersion}); ` +
        'run a newer replenish or restore a backup made for this version',
    )
    this.databaseVersion = databaseVersion
    this.binaryVersion = binaryVersion
  }
}

/** C16's "active": a subscription that still acts (C9), paused or not. */
const ACTING = (row: string): string => `(${row}.state IN ('active', 'pending_cancellation'))`

/**
 * Adds counts to report_months (migration 10): `select` answers (currency, month, then one value
 * per column of `columns`), each row added to its month's row, made when missing.
 */
export const reportUpsert = (columns: readonly string[], select: string): string =>
  `INSERT INTO report_months (currency, month, ${columns.join(', ')}) ${select}
    ON CONFLICT (currency, month, shard) DO UPDATE SET ${columns.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')};`

/**
 * The counts of the past, from the rows as they stand: a subscription is new and active in the
 * month it was created; one that no longer acts left in the month of its last change (canceled
 * ones count as canceled then); installments were made in their month and fulfilled in the month
 * of their last change. Their totals were not kept before this migration (they had none).
 */
const REPORT_BACKFILL = [
  reportUpsert(['new_subscriptions', 'active_change'], `SELECT currency, substr(created_at, 1, 7), count(*), count(*) FROM subscriptions WHERE true GROUP BY 1, 2`),
  reportUpsert(['canceled_subscriptions', 'active_change'], `SELECT currency, substr(updated_at, 1, 7), sum(state = 'canceled'), -count(*)
    FROM subscriptions s WHERE NOT ${ACTING('s')} GROUP BY 1, 2`),
  reportUpsert(['installments_made'], `SELECT currency, substr(created_at, 1, 7), count(*) FROM installments WHERE true GROUP BY 1, 2`),
  reportUpsert(['installments_fulfilled'], `SELECT currency, substr(updated_at, 1, 7), count(*) FROM installments WHERE state = 'fulfilled' GROUP BY 1, 2`),
].join('\n')

/**
 * The counts that move with each change, whatever statement makes it: a subscription made (an
 * import may bring one that already left: it leaves in the month of its updated_at); one that
 * stops or starts acting (cancel, end, erasure, activate: every state change sets updated_at, the
 * real time of the change, as its event's created_at); an installment fulfilled, with its frozen
 * total in minor units (the total string has exactly the currency's digits). Installments made
 * are counted by the processor's batch, one statement per batch (installments-store.ts).
 */
const REPORT_TRIGGERS = `
      CREATE TRIGGER report_subscription_created AFTER INSERT ON subscriptions
      BEGIN
        ${reportUpsert(['new_subscriptions', 'active_change'], 'VALUES (NEW.currency, substr(NEW.created_at, 1, 7), 1, 1)')}
        ${reportUpsert(['canceled_subscriptions', 'active_change'], `SELECT NEW.currency, substr(NEW.updated_at, 1, 7), NEW.state = 'canceled', -1 WHERE NOT ${ACTING('NEW')}`)}
      END;
      CREATE TRIGGER report_subscription_state AFTER UPDATE OF state ON subscriptions
        WHEN ${ACTING('OLD')} <> ${ACTING('NEW')}
      BEGIN
        ${reportUpsert(['canceled_subscriptions', 'active_change'], `VALUES (NEW.currency, substr(NEW.updated_at, 1, 7), NEW.state = 'canceled', CASE WHEN ${ACTING('NEW')} THEN 1 ELSE -1 END)`)}
      END;
      CREATE TRIGGER report_subscription_currency AFTER UPDATE OF currency ON subscriptions
        WHEN OLD.currency <> NEW.currency AND ${ACTING('NEW')}
      BEGIN
        ${reportUpsert(['active_change'], `VALUES (OLD.currency, substr(NEW.updated_at, 1, 7), -1), (NEW.currency, substr(NEW.updated_at, 1, 7), 1)`)}
      END;
      CREATE TRIGGER report_installment_fulfilled AFTER UPDATE OF state ON installments
        WHEN NEW.state = 'fulfilled' AND OLD.state <> 'fulfilled'
      BEGIN
        ${reportUpsert(['installments_fulfilled', 'fulfilled_total'], `VALUES (NEW.currency, substr(NEW.updated_at, 1, 7), 1, coalesce(CAST(replace(NEW.total, '.', '') AS INTEGER), 0))`)}
      END;`

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'customers, catalog and subscriptions',
    sql: `
      CREATE TABLE users (
        id INTEGER PRIMARY KEY,
        email TEXT NOT NULL UNIQUE COLLATE NOCASE,
        external_id TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE TABLE api_keys (
        id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id),
        key_hash TEXT NOT NULL UNIQUE,
        prefix TEXT NOT NULL,
        revoked_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX api_keys_user ON api_keys(user_id);
      CREATE TABLE admin_tokens (
        id INTEGER PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        prefix TEXT NOT NULL,
        created_at TEXT NOT NULL
      ) STRICT;
      CREATE TABLE payment_methods (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        active INTEGER NOT NULL DEFAULT 1,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE TABLE payment_sources (
        id INTEGER PRIMARY KEY AUTOINCREMENT, -- deleted rows' ids are never handed out again
        user_id INTEGER NOT NULL REFERENCES users(id),
        payment_method_id INTEGER NOT NULL REFERENCES payment_methods(id),
        kind TEXT, brand TEXT, last_digits TEXT, month INTEGER, year INTEGER, gateway_reference TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX payment_sources_user ON payment_sources(user_id);
      CREATE TABLE subscribables (
        id INTEGER PRIMARY KEY AUTOINCREMENT, -- deleted rows' ids are never handed out again
        sku TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        subscribable INTEGER NOT NULL DEFAULT 1,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE TABLE subscriptions (
        id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id),
        state TEXT NOT NULL,
        paused INTEGER NOT NULL DEFAULT 0,
        interval_length INTEGER NOT NULL,
        interval_units TEXT NOT NULL,
        actionable_date TEXT,
        anchor_day INTEGER,
        end_date TEXT,
        skip_count INTEGER NOT NULL DEFAULT 0,
        successive_skip_count INTEGER NOT NULL DEFAULT 0,
        payment_method_id INTEGER,
        payment_source_id INTEGER,
        currency TEXT NOT NULL,
        processing_state TEXT NOT NULL DEFAULT 'pending',
        shipping_address TEXT,
        billing_address TEXT,
        created_on TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX subscriptions_user ON subscriptions(user_id, id);
      CREATE INDEX subscriptions_due ON subscriptions(actionable_date) WHERE state IN ('active', 'pending_cancellation');
      CREATE INDEX subscriptions_ending ON subscriptions(end_date) WHERE state IN ('active', 'pending_cancellation') AND end_date IS NOT NULL;
      CREATE TABLE line_items (
        id INTEGER PRIMARY KEY AUTOINCREMENT, -- deleted rows' ids are never handed out again
        subscription_id INTEGER NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
        subscribable_id INTEGER NOT NULL REFERENCES subscribables(id),
        quantity INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX line_items_subscription ON line_items(subscription_id, id);
      CREATE INDEX line_items_subscribable ON line_items(subscribable_id);
      CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        type TEXT NOT NULL,
        subscription_id INTEGER,
        data TEXT NOT NULL,
        created_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX events_subscription ON events(subscription_id, id);
      CREATE TABLE installments (
        id INTEGER PRIMARY KEY,
        subscription_id INTEGER NOT NULL REFERENCES subscriptions(id),
        due_date TEXT NOT NULL,
        state TEXT NOT NULL,
        retry_at TEXT,
        first_failed_at TEXT,
        -- The attempt an identical repeat may replay as a no-op; null once anything else happened (C9).
        replayable_attempt_id INTEGER,
        line_items TEXT NOT NULL,
        shipping_address TEXT,
        billing_address TEXT,
        payment_method_id INTEGER,
        payment_source_id INTEGER,
        currency TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (subscription_id, due_date)
      ) STRICT;
      CREATE INDEX installments_state ON installments(state, retry_at);
      -- One processor at a time (C9): the holder renews expires_at (ms since epoch) with every batch.
      CREATE TABLE leases (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      ) STRICT;
      -- Processor runs, so /readyz can tell a stalled processor from an idle one in any process.
      CREATE TABLE process_runs (
        id INTEGER PRIMARY KEY,
        holder TEXT NOT NULL,
        as_of TEXT NOT NULL,
        processed INTEGER NOT NULL DEFAULT 0,
        started_at TEXT NOT NULL,
        finished_at TEXT
      ) STRICT;
      CREATE TABLE installment_attempts (
        id INTEGER PRIMARY KEY,
        installment_id INTEGER NOT NULL REFERENCES installments(id),
        result TEXT NOT NULL,
        order_reference TEXT,
        message TEXT,
        created_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX installment_attempts_installment ON installment_attempts(installment_id, id);
      CREATE TABLE idempotency_keys (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        status INTEGER NOT NULL,
        body TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (scope, key)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX idempotency_keys_age ON idempotency_keys(created_at);
    `,
  },
  {
    version: 2,
    // Issue 6: the index events(subscription_id, id) took an insert at a random leaf with every
    // write, a page more for the WAL, the fsync and the checkpoint each time (PATCH +7%, skip +12%
    // without it). A subscription's events are a chain instead, newest first, kept by the
    // database itself: every insert, whatever statement makes it, links itself in.
    name: 'events chained per subscription instead of indexed',
    sql: `
      ALTER TABLE subscriptions ADD COLUMN last_event_id INTEGER;
      ALTER TABLE subscriptions ADD COLUMN event_count INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE events ADD COLUMN prev_id INTEGER;
      UPDATE events SET prev_id = (SELECT max(e.id) FROM events e WHERE e.subscription_id = events.subscription_id AND e.id < events.id)
        WHERE subscription_id IS NOT NULL;
      UPDATE subscriptions SET
        last_event_id = (SELECT max(id) FROM events WHERE subscription_id = subscriptions.id),
        event_count = (SELECT count(*) FROM events WHERE subscription_id = subscriptions.id);
      DROP INDEX events_subscription;
      CREATE TRIGGER events_chain AFTER INSERT ON events WHEN NEW.subscription_id IS NOT NULL
      BEGIN
        SELECT RAISE(ABORT, 'events.prev_id must be the id of the subscription''s latest event')
          WHERE NEW.prev_id IS NOT (SELECT last_event_id FROM subscriptions WHERE id = NEW.subscription_id);
        UPDATE subscriptions SET last_event_id = NEW.id, event_count = event_count + 1 WHERE id = NEW.subscription_id;
      END;
    `,
  },
  {
    version: 3,
    // Issue 6: each new line item took an insert at the end of its catalog item's range of this
    // index, a random page for every item a create or an add writes (create: 53 → 44 µs of CPU
    // per unit without it). Its one reader is the admin's DELETE of a catalog item, rare, which
    // now scans line_items (docs/decisions.md).
    name: 'no index of line items by catalog item',
    sql: 'DROP INDEX line_items_subscribable;',
  },
  {
    version: 4,
    // Issue 6: a skip moved the subscription's entry in the processor's index (actionable_date),
    // a delete and an insert at random leaves with every skip (skip 32.6 → 29.8 µs of CPU per
    // unit without them). The index is now keyed by `due_floor`, a date never after
    // actionable_date: a skip only moves the date forward and leaves the floor (and the index)
    // alone; the processor reads actionable_date itself and lifts the floors that fell behind.
    // The two triggers lower the floor whenever a write, whatever statement makes it, sets a date
    // before it, so no subscription can be due and missed.
    name: 'the processor indexes a floor of actionable_date that a skip leaves behind',
    sql: `
      ALTER TABLE subscriptions ADD COLUMN due_floor TEXT;
      UPDATE subscriptions SET due_floor = actionable_date;
      DROP INDEX subscriptions_due;
      CREATE INDEX subscriptions_due ON subscriptions(due_floor) WHERE state IN ('active', 'pending_cancellation');
      CREATE TRIGGER subscriptions_due_floor_inserted AFTER INSERT ON subscriptions
        WHEN NEW.actionable_date IS NOT NULL AND (NEW.due_floor IS NULL OR NEW.due_floor > NEW.actionable_date)
      BEGIN
        UPDATE subscriptions SET due_floor = NEW.actionable_date WHERE id = NEW.id;
      END;
      CREATE TRIGGER subscriptions_due_floor_lowered AFTER UPDATE OF actionable_date, due_floor ON subscriptions
        WHEN NEW.actionable_date IS NOT NULL AND (NEW.due_floor IS NULL OR NEW.due_floor > NEW.actionable_date)
      BEGIN
        UPDATE subscriptions SET due_floor = NEW.actionable_date WHERE id = NEW.id;
      END;
    `,
  },
  {
    version: 5,
    // Issue 17: where the shop's order system is told about events (C10, C11). `secret` is kept as
    // it is, not hashed: it is a shared HMAC key the delivery must sign with, not a password.
    // After a rotation the old secret signs too until `previous_secret_expires_at` (C13: 24 h).
    // A delete only sets `deleted_at`: the endpoint is gone for the API, while the deliveries
    // made to it keep something to refer to; its secrets are blanked then, being of no more use.
    name: 'webhook endpoints',
    sql: `
      CREATE TABLE webhook_endpoints (
        id INTEGER PRIMARY KEY,
        url TEXT NOT NULL,
        events TEXT NOT NULL,
        description TEXT,
        secret TEXT NOT NULL,
        previous_secret TEXT,
        previous_secret_expires_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        deleted_at TEXT
      ) STRICT;
    `,
  },
  {
    version: 6,
    // Issue 18 (C13): stored admin tokens get a scope (the ones made before were full admin
    // tokens, so 'admin'), a label to tell them apart, when they were last used (written at most
    // once a minute per token: docs/decisions.md) and a revocation time. A revoked row stays, so
    // the list of what existed, and when it was last used, survives the revocation.
    name: 'admin token scopes, labels, last use and revocation',
    sql: `
      ALTER TABLE admin_tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'admin' CHECK (scope IN ('admin', 'read', 'metrics'));
      ALTER TABLE admin_tokens ADD COLUMN label TEXT;
      ALTER TABLE admin_tokens ADD COLUMN updated_at TEXT;
      ALTER TABLE admin_tokens ADD COLUMN last_used_at TEXT;
      ALTER TABLE admin_tokens ADD COLUMN revoked_at TEXT;
      UPDATE admin_tokens SET updated_at = created_at;
    `,
  },
  {
    version: 7,
    // Issue 17 (C10): the outbox. A delivery row is made for every endpoint an event concerns by
    // the database itself, in the transaction that writes the event, whatever statement writes it
    // (the processor builds its installment.created events in SQL), so no event can commit without
    // its deliveries. Times are milliseconds since the epoch: the dispatcher compares them on every
    // fetch. `retries` counts the scheduled attempts that failed (the backoff's exponent);
    // `attempts` is the log the admin API shows, a JSON array, one row write per attempt.
    // A delivery does not reference its event: events are pruned (retention), deliveries with them.
    // An endpoint counts the deliveries that reached delivered and failed, for /metrics.
    name: 'webhook deliveries (the outbox)',
    sql: `
      CREATE TABLE webhook_deliveries (
        id INTEGER PRIMARY KEY,
        endpoint_id INTEGER NOT NULL REFERENCES webhook_endpoints(id),
        event_id INTEGER NOT NULL,
        event_type TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed', 'canceled')),
        retries INTEGER NOT NULL DEFAULT 0,
        attempt_count INTEGER NOT NULL DEFAULT 0,
        attempts TEXT NOT NULL DEFAULT '[]',
        due_ms INTEGER,
        created_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL,
        delivered_ms INTEGER
      ) STRICT;
      CREATE INDEX webhook_deliveries_pending ON webhook_deliveries(endpoint_id, due_ms, created_ms) WHERE state = 'pending';
      CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries(endpoint_id, id);
      ALTER TABLE webhook_endpoints ADD COLUMN delivered_total INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE webhook_endpoints ADD COLUMN failed_total INTEGER NOT NULL DEFAULT 0;
      CREATE TRIGGER events_outbox AFTER INSERT ON events
      BEGIN
        INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, due_ms, created_ms, updated_ms)
          SELECT w.id, NEW.id, NEW.type, t.ms, t.ms, t.ms
          FROM webhook_endpoints w, (SELECT CAST(round(unixepoch(NEW.created_at, 'subsec') * 1000) AS INTEGER) AS ms) t
          WHERE w.deleted_at IS NULL
            AND (w.events = '["*"]' OR EXISTS (SELECT 1 FROM json_each(w.events) WHERE value = NEW.type));
      END;
    `,
  },
  {
    version: 8,
    // Issue 18 (C13): an erased user keeps its row (its id is in subscriptions, keys, installments'
    // history) with `email` null, so the column becomes nullable; its UNIQUE index lets any number
    // of nulls be. SQLite cannot drop a NOT NULL in place: the table is rebuilt, columns in the same
    // order (`SELECT *` maps them to the user's JSON). api_keys, payment_sources and subscriptions
    // reference users(id), so dropping the table would fail their foreign keys at once; deferred,
    // they are checked at COMMIT, by which time the same ids are back. The runner's transaction
    // cannot turn foreign keys off (SQLite ignores that pragma inside one), defer_foreign_keys it can,
    // and it ends with the transaction.
    // A key's last use (written at most once a minute, docs/decisions.md) is shown to the shop.
    name: 'nullable user email (erasure), last use of API keys',
    sql: `
      PRAGMA defer_foreign_keys = ON;
      CREATE TEMP TABLE users_before_8 AS SELECT * FROM users;
      DROP TABLE users;
      CREATE TABLE users (
        id INTEGER PRIMARY KEY,
        email TEXT UNIQUE COLLATE NOCASE,
        external_id TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      INSERT INTO users (id, email, external_id, created_at, updated_at)
        SELECT id, email, external_id, created_at, updated_at FROM users_before_8;
      DROP TABLE users_before_8;
      ALTER TABLE api_keys ADD COLUMN last_used_at TEXT;
    `,
  },
  {
    version: 9,
    // Issue 19 (C14): the customer portal. A link is used once and lives an hour; a session lives
    // 12 h after its last use. Both are found by the SHA-256 of their secret, never the secret.
    // Times are ISO 8601 text, compared as text (they all end in Z with milliseconds).
    name: 'portal links and sessions',
    sql: `
      CREATE TABLE portal_links (
        id INTEGER PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        user_id INTEGER NOT NULL REFERENCES users(id),
        return_url TEXT,
        expires_at TEXT NOT NULL,
        used_at TEXT,
        created_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX portal_links_expiry ON portal_links (expires_at);
      CREATE TABLE portal_sessions (
        id INTEGER PRIMARY KEY,
        session_hash TEXT NOT NULL UNIQUE,
        user_id INTEGER NOT NULL REFERENCES users(id),
        csrf_token TEXT NOT NULL,
        return_url TEXT,
        expires_at TEXT NOT NULL,
        touched_at TEXT NOT NULL,
        created_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX portal_sessions_expiry ON portal_sessions (expires_at);
    `,
  },
  {
    version: 10,
    // Issue 26 (C16): money. Amounts are integers in minor units of their currency (digits from
    // Intl: src/domain/currency.ts), a discount is basis points (12.5 % is 1250): SQL computes
    // with them exactly and renders C16's strings (src/store/money-sql.ts). Beside them, as the
    // catalog writes them, what does not change with a line: the price and the percent as shown
    // (`amount_text`, `discount_percent`) and the currency's minor unit (`minor_unit`, 100 for
    // USD), so a million snapshots format only what depends on the quantity. A price is a row per
    // currency; deleting the catalog item deletes them. An installment freezes its
    // totals as the strings it showed (C16: never altered later). report_months keeps the shop's
    // monthly counts (C16's reports), moved in the transaction of each change by the triggers
    // below (and by the processor's batch for installments made), so a report reads a few rows
    // however many subscriptions, events and installments there are, and survives event
    // retention. `shard` spreads PostgreSQL's concurrent writers over rows; SQLite's one writer
    // always uses 0. The counts of the past are rebuilt from the rows as they stand
    // (docs/decisions.md, "Money": what that approximates).
    name: 'prices, discounts, installment totals and the monthly report',
    sql: `
      ALTER TABLE subscribables ADD COLUMN discount_bp INTEGER NOT NULL DEFAULT 0 CHECK (discount_bp BETWEEN 0 AND 10000);
      ALTER TABLE subscribables ADD COLUMN discount_percent TEXT NOT NULL DEFAULT '0';
      CREATE TABLE subscribable_prices (
        subscribable_id INTEGER NOT NULL REFERENCES subscribables(id) ON DELETE CASCADE,
        currency TEXT NOT NULL,
        amount INTEGER NOT NULL CHECK (amount >= 0),
        amount_text TEXT NOT NULL,
        minor_unit INTEGER NOT NULL,
        PRIMARY KEY (subscribable_id, currency)
      ) STRICT, WITHOUT ROWID;
      ALTER TABLE installments ADD COLUMN subtotal TEXT;
      ALTER TABLE installments ADD COLUMN discount_total TEXT;
      ALTER TABLE installments ADD COLUMN total TEXT;
      CREATE TABLE report_months (
        currency TEXT NOT NULL,
        month TEXT NOT NULL,
        shard INTEGER NOT NULL DEFAULT 0,
        new_subscriptions INTEGER NOT NULL DEFAULT 0,
        canceled_subscriptions INTEGER NOT NULL DEFAULT 0,
        active_change INTEGER NOT NULL DEFAULT 0,
        installments_made INTEGER NOT NULL DEFAULT 0,
        installments_fulfilled INTEGER NOT NULL DEFAULT 0,
        fulfilled_total INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (currency, month, shard)
      ) STRICT, WITHOUT ROWID;
      -- The recurring report reads the acting, unpaused subscriptions of one currency, a range of
      -- ids at a time: this index holds just those, by (currency, id). Skips and line item
      -- changes do not touch it; creates append to it.
      CREATE INDEX subscriptions_recurring ON subscriptions(currency) WHERE state IN ('active', 'pending_cancellation') AND paused = 0;
${REPORT_BACKFILL}
${REPORT_TRIGGERS}
    `,
  },
  {
    version: 11,
    // Issue 27 (C17): customers are told. A user's `locale` is null while it follows the service's
    // default (REPLENISH_DEFAULT_LOCALE), so changing the default changes every such user's mails.
    // `upcoming_for` is the actionable date a subscription.upcoming event was written for: one
    // event per (subscription, date), and a date that moves gets its own.
    // `emails` is the mail outbox, written in the transaction of the event it tells of (C17); times
    // are ms since the epoch, as the webhook outbox's. It holds no body and no link: a mail is
    // rendered when it is sent, its one-time portal link made then, only its subject kept.
    // `email_totals` (one row, made by the first outcome) counts mails sent and failed for /metrics
    // without counting rows.
    name: 'customer e-mail: user locale and notifications, upcoming deliveries, the mail outbox',
    sql: `
      ALTER TABLE users ADD COLUMN locale TEXT;
      ALTER TABLE users ADD COLUMN email_notifications INTEGER NOT NULL DEFAULT 1;
      ALTER TABLE subscriptions ADD COLUMN upcoming_for TEXT;
      CREATE TABLE emails (
        id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id),
        kind TEXT NOT NULL CHECK (kind IN ('upcoming', 'payment_failed', 'canceled')),
        event_id INTEGER NOT NULL,
        to_address TEXT,
        subject TEXT,
        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),
        retries INTEGER NOT NULL DEFAULT 0,
        attempts TEXT NOT NULL DEFAULT '[]',
        due_ms INTEGER,
        created_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX emails_pending ON emails(due_ms, id) WHERE state = 'pending';
      CREATE INDEX emails_user ON emails(user_id, id);
      CREATE INDEX emails_state ON emails(state, id);
      CREATE TABLE email_totals (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        sent INTEGER NOT NULL DEFAULT 0,
        failed INTEGER NOT NULL DEFAULT 0
      ) STRICT;
    `,
  },
  {
    version: 13,
    // Issue 28 (C18): `GET /users?q=` matches a case-insensitive prefix of the email, the external
    // id or the part of the email after `@` (accounts-store.ts). The email prefix uses the unique
    // `email COLLATE NOCASE` index as it is (NOCASE folds ASCII, as lower() does); these two index
    // the others. The expressions are written exactly as the search writes them: SQLite uses an
    // index on an expression only for that same expression.
    name: 'user search by external id and email domain',
    sql: `
      CREATE INDEX users_external_id_lower ON users (lower(external_id));
      CREATE INDEX users_email_domain ON users (lower(substr(email, instr(email, '@') + 1)));
    `,
  },
  {
    version: 14,
    // Issue 28 (C18): who made each change, and in which request. Events written before have
    // NULL in all three (the API shows `actor: null`). Adding nullable columns rewrites nothing.
    name: 'event actors and request ids',
    sql: `
      ALTER TABLE events ADD COLUMN actor_type TEXT;
      ALTER TABLE events ADD COLUMN actor_id INTEGER;
      ALTER TABLE events ADD COLUMN request_id TEXT;
    `,
  },
  {
    version: 12,
    // Issue 28 (C18, webhook operations). An endpoint can be disabled: it gets no new deliveries
    // (the outbox trigger skips it) and sends none (the dispatcher skips it), while what it has
    // pending waits for it to be enabled again. A `webhook.test` event is delivered to the one
    // endpoint it was sent for, by the handler that writes it, never fanned out by the trigger.
    // Failed deliveries are listed across endpoints by id: a partial index, since few fail and
    // a failed delivery never changes state again (pending ones are found through their own).
    name: 'disabled webhook endpoints, test events, failed deliveries by id',
    sql: `
      ALTER TABLE webhook_endpoints ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1));
      DROP TRIGGER events_outbox;
      CREATE TRIGGER events_outbox AFTER INSERT ON events WHEN NEW.type <> 'webhook.test'
      BEGIN
        INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, due_ms, created_ms, updated_ms)
          SELECT w.id, NEW.id, NEW.type, t.ms, t.ms, t.ms
          FROM webhook_endpoints w, (SELECT CAST(round(unixepoch(NEW.created_at, 'subsec') * 1000) AS INTEGER) AS ms) t
          WHERE w.deleted_at IS NULL AND w.disabled = 0
            AND (w.events = '["*"]' OR EXISTS (SELECT 1 FROM json_each(w.events) WHERE value = NEW.type));
      END;
      CREATE INDEX webhook_deliveries_failed ON webhook_deliveries(id) WHERE state = 'failed';
    `,
  },
  {
    version: 15,
    // Issue 27 (C17): one-time add-ons. A constant default rewrites nothing. The partial index
    // holds only one-time lines: the processor finds those of a batch's subscriptions through it
    // (installments-store.ts), and a batch without any costs a lookup in an empty index.
    name: 'one-time line items',
    sql: `
      ALTER TABLE line_items ADD COLUMN one_time INTEGER NOT NULL DEFAULT 0 CHECK (one_time IN (0, 1));
      CREATE INDEX line_items_one_time ON line_items(subscription_id, id) WHERE one_time = 1;
    `,
  },
  {
    version: 16,
    // PostgreSQL migration 16 (issue 30): the customers' credentials' generation, which several
    // instances check their key caches against. One process serves a SQLite file and clears its
    // own cache when it revokes a key, so nothing here reads it; the table and triggers keep both
    // schemas alike (a file copied to PostgreSQL starts its own count there).
    name: 'credential generation',
    sql: `
      CREATE TABLE credential_generations (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        n INTEGER NOT NULL
      ) STRICT;
      INSERT INTO credential_generations (id, n) VALUES (1, 0);
      CREATE TRIGGER api_keys_revoked AFTER UPDATE OF revoked_at ON api_keys
        WHEN OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL
        BEGIN UPDATE credential_generations SET n = n + 1 WHERE id = 1; END;
      CREATE TRIGGER api_keys_deleted AFTER DELETE ON api_keys
        BEGIN UPDATE credential_generations SET n = n + 1 WHERE id = 1; END;
    `,
  },
  {
    version: 17,
    // PostgreSQL migration 17: there, a transaction that inserts many subscriptions (an import)
    // adds their report counts once instead of once a row (PostgreSQL keeps every version of the
    // row a transaction updates; SQLite updates it in place, so its row trigger stays). Nothing
    // changes here: the version keeps both schemas numbered alike.
    name: 'report counts of new subscriptions added once per bulk insert',
    sql: '',
  },
]

/**
 * The migrations in version order, whatever order they were listed in: versions are taken by
 * issues worked on side by side, and their entries may land in this file in any order. Two
 * entries of one version are a mistake this refuses at once.
 */
export function inVersionOrder<M extends { readonly version: number }>(list: readonly M[]): M[] {
  const sorted = [...list].sort((a, b) => a.version - b.version)
  sorted.forEach((m, i) => {
    if (i > 0 && sorted[i - 1]?.version === m.version) throw new Error(`two migrations have version ${m.version}`)
  })
  return sorted
}

export const SCHEMA_VERSION = Math.max(0, ...MIGRATIONS.map((m) => m.version))

export function migrate(db: DatabaseSync, migrations: readonly Migration[] = MIGRATIONS): { from: number; to: number } {
  const ordered = inVersionOrder(migrations)
  const target = ordered[ordered.length - 1]?.version ?? 0
  const current = (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version
  if (current > target) throw new DatabaseTooNewError(current, target)
  const applied = appliedVersions(db, current, migrations)
  let version = current
  for (const m of ordered) {
    if (applied.has(m.version)) continue
    version = Math.max(version, m.version)
    db.exec('BEGIN IMMEDIATE')
    try {
      db.exec(m.sql)
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString())
      db.exec(`PRAGMA user_version = ${version}`)
      db.exec('COMMIT')
    } catch (err) {
      db.exec('ROLLBACK')
      throw err
    }
  }
  return { from: current, to: target }
}

/**
 * The versions this database has. `schema_migrations` came after migration 9: a database without
 * it was migrated in order up to its user_version, and gets the table with those versions.
 */
function appliedVersions(db: DatabaseSync, current: number, migrations: readonly Migration[]): Set<number> {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get() !== undefined
  if (!exists) {
    db.exec('BEGIN IMMEDIATE')
    try {
      db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT')
      const insert = db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 'before schema_migrations')")
      for (const m of migrations) if (m.version <= current) insert.run(m.version, m.name)
      db.exec('COMMIT')
    } catch (err) {
      db.exec('ROLLBACK')
      throw err
    }
  }
  return new Set((db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version))
}
