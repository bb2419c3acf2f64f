/** GET /api/v1/openapi.json (C5): an OpenAPI 3.1 description of the customer API. Placeholder filled in below. */
export const openApiDocument: Record<string, unknown> = {
  openapi: '3.1.0',
  info: { title: 'replenish customer API', version: '1' },
  paths: {},
}
