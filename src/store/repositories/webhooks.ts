/** Webhook endpoints (C10, C13): the repository's records and interfaces, exported by ../api.ts. */

/** A registered webhook endpoint as the admin API shows it: never with its secrets. */
export interface WebhookEndpoint {
  readonly id: number
  readonly url: string
  /** Event types (C10), or `["*"]` for all. */
  readonly events: readonly string[]
  readonly description: string | null
  /** C18: gets no new deliveries and sends none; what it has pending waits for it. */
  readonly disabled: boolean
  readonly created_at: string
  readonly updated_at: string
}

/** A change to an endpoint (C18: PATCH); what is absent stays as it is. */
export interface WebhookEndpointPatch {
  readonly url?: string
  readonly events?: readonly string[]
  readonly description?: string | null
  readonly disabled?: boolean
}

export interface NewWebhookEndpoint {
  readonly url: string
  readonly events: readonly string[]
  readonly description: string | null
  readonly secret: string
}

/** What a delivery signs with (C10, C13): the secret, and the one before it until it expires. */
export interface WebhookSecrets {
  readonly secret: string
  readonly previous_secret: string | null
  readonly previous_secret_expires_at: string | null
}

export interface WebhookReads {
  /** An endpoint that exists (a deleted one is gone). */
  findEndpoint(id: number): Promise<WebhookEndpoint | undefined>
  listEndpoints(after: number, limit: number): Promise<WebhookEndpoint[]>
  /** For signing only: never rendered, never logged. */
  secretsOf(id: number): Promise<WebhookSecrets | undefined>
}

export interface WebhooksTx extends WebhookReads {
  createEndpoint(e: NewWebhookEndpoint): Promise<WebhookEndpoint>
  /** A new secret; the current one becomes the previous, valid for `previousValidMs` from now. */
  rotateSecret(id: number, secret: string, previousValidMs: number): Promise<WebhookEndpoint>
  updateEndpoint(id: number, patch: WebhookEndpointPatch): Promise<WebhookEndpoint>
  /** Gone for the API from now on; its secrets are blanked. */
  deleteEndpoint(id: number): Promise<void>
}
