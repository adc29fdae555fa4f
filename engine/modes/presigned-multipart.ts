import { MAX_PARTS_PER_REQUEST } from '../../protocol/limits.ts'
import type { PartsReply, PresignedMultipartReply, UploadResult } from '../../protocol/wire.ts'
import { type Bytes, isBytes, sizeOf, slice } from '../core/body.ts'
import { UploadError } from '../core/errors.ts'
import type { UploadRun } from '../core/run.ts'
import type { PartStream } from '../core/stream-body.ts'
import { type PartSteps, putMultipart } from '../s3/part-loop.ts'
import type { ChecksumRun } from '../s3/target.ts'
import { postToApi } from '../transport/api.ts'
import { completeAtApi } from './confirm.ts'

/** A multipart upload the upload API created and presigns: its parts, then `/complete`. */
export const putPresignedParts = (
  file: Bytes | PartStream,
  reply: PresignedMultipartReply,
  run: UploadRun,
  checksums?: ChecksumRun,
): Promise<UploadResult> => putMultipart(file, run, reply, presignedSteps(file, reply, run, checksums))

/** The part steps of presigned mode: part URLs fetched from `/parts` just ahead of need; `/complete` and `/abort` at the upload API. */
function presignedSteps(
  file: Bytes | PartStream,
  reply: PresignedMultipartReply,
  run: UploadRun,
  checksums?: ChecksumRun,
): PartSteps {
  const { options } = run
  const { ticket, partSize } = reply
  const bytes = isBytes(file) && file
  // Undefined: a stream of unknown length, whose reply has no partCount (its parts end with the stream).
  const size = sizeOf(file)
  // A ticket of unknown length has no plan: the upload API binds each URL to the length the page
  // gives (`sizes`). Besides a stream, a file carries one on after a reload (a recording kept in
  // the browser: engine/resume/resume.ts), its parts cut from its now-known size.
  const unplanned = size === undefined || !!run.hooks.journal?.sizeUnknown
  const count = unplanned && size !== undefined ? Math.ceil(size / partSize) : reply.partCount
  // The upload API's plan as it stands (planParts would choose a part size of its own). A plan that
  // does not fit the file (or has no partCount: that is for a body of unknown length, and a Blob's
  // is known) fails the first signing, inside the upload, so what the upload API created is still aborted.
  const misplanned =
    size !== undefined &&
    count !== Math.ceil(size / partSize) &&
    new UploadError(`The upload API planned ${count ?? 'no'} parts of ${partSize} bytes for a ${size}-byte file`)
  // Part URLs are fetched in batches just ahead of need, so none sits long enough to expire,
  // however long the upload runs. A batch never asks for more than one /parts call may sign.
  // Only parts whose length follows from the plan, and whose bytes are at hand when a checksum
  // needs them, are asked for ahead; a stream's part otherwise gets its URL once it is read.
  const ahead = bytes || (size !== undefined && !checksums)
  const batchSize = ahead ? Math.min(options.partConcurrency * 2, MAX_PARTS_PER_REQUEST) : 1
  const pending = new Map<number, string | Promise<string>>()
  // The first parts' URLs came with the reply (from upload APIs that send them), kept as they are
  // (those from /parts are promises). The reply's URLs sign no Content-MD5: with a checksum, every
  // URL comes from /parts, which signs it.
  if (!checksums) for (const n in reply.urls) pending.set(+n, reply.urls[n]!)

  const fetchBatch = (first: number, body?: Bytes) => {
    const partNumbers: number[] = []
    for (let n = first; !(n > count!) && partNumbers.length < batchSize; n++) if (!pending.has(n)) partNumbers.push(n)
    // A part's length: the stream's part as read, else the file's plan (the last part what is left).
    const lengthOf = (n: number, body?: Bytes) =>
      size === undefined ? sizeOf(body!) : Math.min(partSize, size - (n - 1) * partSize)
    const bodyOf = (n: number) => (n === first && body) || slice(bytes as Bytes, (n - 1) * partSize, n * partSize)
    // With checksum('md5') each part's MD5 is signed into its URL: hashed first, one part at a time
    // (one part in memory). An upload API that ignores them still gets a PUT storage verifies.
    const batch = (async () => {
      const contentMd5: Record<number, string> = {}
      if (checksums)
        for (const n of partNumbers) contentMd5[n] = (await checksums.headers(n, bodyOf(n)))['content-md5']!
      return postToApi<PartsReply>(
        run,
        '/parts',
        {
          ticket,
          partNumbers,
          ...(checksums && { contentMd5 }),
          ...(unplanned && { sizes: Object.fromEntries(partNumbers.map((n) => [n, lengthOf(n, body)])) }),
        },
        options.signal,
      )
    })()
    for (const n of partNumbers) {
      const url = batch.then(
        ({ urls }) => urls[n] ?? Promise.reject(new UploadError(`The upload API sent no URL for part ${n}`)),
      )
      // URLs fetched ahead may never be awaited (the upload failed first): their rejection must
      // not go unhandled. The part that does await one still sees it; its next try (after a
      // pause, or a wait for the network) asks again.
      url.catch(() => pending.get(n) === url && pending.delete(n))
      pending.set(n, url)
    }
  }

  return {
    // A URL serves its part's retries too; one can expire before use (and RGW refuses an expired
    // one with a bare 403): a refused URL is worth one fresh one.
    async signPart(partNumber, body, refused) {
      if (misplanned) throw misplanned
      // For a stream of unknown length the reply's URLs are bound to exactly `partSize` bytes: a
      // shorter last part asks for its own.
      if (
        refused ||
        (size === undefined && sizeOf(body) !== partSize && pending.get(partNumber) === reply.urls?.[partNumber])
      ) {
        pending.delete(partNumber)
      }
      if (!pending.has(partNumber)) fetchBatch(partNumber, body)
      // The next batch is asked for while as many parts as run at once are still to go on this
      // one, so no part waits on a /parts round trip.
      const next = partNumber + options.partConcurrency
      if (ahead && next <= count! && !pending.has(next)) fetchBatch(next)
      const url = await pending.get(partNumber)!
      return { method: 'PUT', url, headers: await checksums?.headers(partNumber, body) }
    },
    complete: () => completeAtApi(ticket, run, run.parts!.etags),
    abort: (deadline) => postToApi(run, '/abort', { ticket }, deadline),
  }
}
