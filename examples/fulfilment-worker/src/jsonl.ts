import { mkdir, open, readFile, rename, type FileHandle } from 'node:fs/promises'
import { dirname } from 'node:path'

/**
 * An append-only file of JSON lines, each on disk (fdatasync) before `append` resolves: after a
 * crash, even a power cut, every line appended is there. A line cut short by a crash mid-write
 * was never confirmed to anyone, and is skipped when the file is read again.
 */
export class JsonLines<T> {
  private readonly file: FileHandle
  private tail: Promise<void> = Promise.resolve()

  private constructor(file: FileHandle) {
    this.file = file
  }

  /**
   * The records in `path` (none when it does not exist yet), and the file open to append more.
   * `keep`, when given, rewrites the file first with only the records it returns: a small file
   * stays small. The rewrite goes to a temporary file renamed into place, so a crash during it
   * leaves the old file whole.
   */
  static async open<T>(path: string, keep?: (records: T[]) => T[]): Promise<{ log: JsonLines<T>; records: T[] }> {
    await mkdir(dirname(path), { recursive: true })
    const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? '' : Promise.reject(err)))
    let records = parse<T>(text)
    if (keep) {
      records = keep(records)
      const temporary = `${path}.tmp`
      const rewritten = await open(temporary, 'w')
      await rewritten.writeFile(records.map((r) => `${JSON.stringify(r)}\n`).join(''))
      await rewritten.datasync()
      await rewritten.close()
      await rename(temporary, path)
    }
    const file = await open(path, 'a')
    // A line cut short must not run into the next one appended: end it (it stays unreadable).
    if (!keep && text !== '' && !text.endsWith('\n')) await file.appendFile('\n')
    await syncDirectory(dirname(path)) // the file's name survives a power cut too
    return { log: new JsonLines<T>(file), records }
  }

  /** Resolves once the record is on disk. Appends are written one after the other, in call order. */
  append(record: T): Promise<void> {
    const line = `${JSON.stringify(record)}\n`
    this.tail = this.tail.then(async () => {
      await this.file.appendFile(line)
      await this.file.datasync()
    })
    return this.tail
  }

  close(): Promise<void> {
    return this.tail.then(() => this.file.close())
  }
}

function parse<T>(text: string): T[] {
  const out: T[] = []
  for (const line of text.split('\n')) {
    if (line === '') continue
    try {
      out.push(JSON.parse(line) as T)
    } catch {
      // The last line of a file written when the process died: never confirmed, so never acted on.
    }
  }
  return out
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
