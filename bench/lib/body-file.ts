import { createWriteStream } from 'node:fs'
import { finished } from 'node:stream/promises'
import { MiB } from './report.ts'

/**
 * Writes `size` bytes to `path`, a 1 MiB pseudo-random block repeated, through a stream (never
 * all in memory): a body to pick through `<input type=file>`.
 * Chromium refuses generated Blobs above ~400-512 MiB (NotReadableError), and users' files are
 * file-backed anyway.
 */
export async function writeBodyFile(path: string, size: number): Promise<void> {
  const block = new Uint8Array(MiB)
  for (let i = 0; i < block.length; i++) block[i] = (i * 2654435761) >>> 24
  const out = createWriteStream(path)
  for (let written = 0; written < size; written += MiB) {
    if (!out.write(block.subarray(0, Math.min(MiB, size - written))))
      await new Promise<void>((resolve) => out.once('drain', () => resolve()))
  }
  out.end()
  await finished(out)
}
