/** Imports that keep ids (C13): the repository's records and interfaces, exported by ../api.ts. */
import type { ImportRecord, ImportRefusal, StoredImportRow } from '../../domain/import/records.ts'

/** An import (C13, docs/import.md): rows brought in with their ids, dates and counters. */
export interface ImportsTx {
  /** The stored row a record names (by id; an API key by its key), in the record's own shape. */
  stored(record: ImportRecord): Promise<StoredImportRow | undefined>
  /** Writes a record `stored` did not find, as given; or answers what it refers to that is missing or taken. */
  insert(record: ImportRecord): Promise<ImportRefusal | undefined>
  /**
   * Once every record is written, in the same unit: what a store keeps for the end. PostgreSQL
   * adds the monthly report's counts of the subscriptions inserted, at once (migration 17: once a
   * row, an import's upserts of one report row grow with the square of its size).
   */
  finish(): Promise<void>
}
