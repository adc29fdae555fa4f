import {
  DEFAULT_API_PATH,
  type ListPartsReply,
  type PresignedMultipartReply,
  type RefreshReply,
  type StoredPart,
  type Strategy,
  type TokenReply,
  type UploadResult,
} from '../../protocol/wire.ts'
import { xmlText } from '../../protocol/xml.ts'
import { isBlob } from '../core/body.ts'
import { ApiError, S3Error } from '../core/errors.ts'
import type { ApiOptions, TransferOptions } from '../core/options.ts'
import { createRun, type UploadRun } from '../core/run.ts'
import type { PartJournal, Prepared } from '../core/run-hooks.ts'
import type { PartStream } from '../core/stream-body.ts'
import { send } from '../s3/send.ts'
import { createSigner } from '../s3/sign.ts'
import { postToApi } from '../transport/api.ts'
import { defaultResumeStore, fileFingerprint, type ResumeRecord, type ResumeStore } from './resume-store.ts'

/**
 * What resume reads of an upload's options: `UploadOptions`' fields, named here because
 * modes/request.ts (`UploadOptions.resume`) imports this module: resume is a layer below the modes.
 */
type ResumedOptions = TransferOptions &
  ApiOptions & { strategy?: Strategy; filename?: string; fileHandle?: FileSystemFileHandle; fingerprint?: string }

/** Where `resumeUploads()` keeps its records, and for how long. */
export interface ResumeOptions {
  /** @default IndexedDB in browsers (`indexedDbResumeStore()`), memory elsewhere */
  store?: ResumeStore
  /** How long a record is kept, ms. @default 86 400 000 (24 h: the upload API's default ticket lifetime) */
  maxAge?: number
}

/**
 * Resume after a reload. Pass the result as `upload()`'s `resume` option: each multipart upload
 * is recorded (where it lives, the API's ticket for it, each part storage accepts) under the
 * file's fingerprint; a later `upload()` of the same file through the same API asks storage
 * which parts it really holds (presigned: the upload API's `/list-parts`; token: ListParts with fresh
 * credentials from `/refresh`), sends only the missing ones, and completes. The server needs
 * `resumable: true`. A record whose upload is gone from storage (aborted, expired) is dropped
 * and the file starts afresh; a finished, failed or aborted upload drops its record.
 *
 * Never throws; `upload()` with it rejects as without it (a record that cannot be carried on
 * means a fresh upload, not an error).
 *
 * @example
 * ```ts
 * const resume = resumeUploads()
 * await upload(file, { strategy: 'presigned', resume })
 * // after a reload: the same file picked again carries on
 * const unfinished = await resume.list()
 * ```
 */
export function resumeUploads({
  store = defaultResumeStore(),
  maxAge = 24 * 60 * 60_000,
}: ResumeOptions = {}): ResumeUploads {
  return new ResumeUploads(store, maxAge)
}

/**
 * What `resumeUploads()` makes: the `resume` option of `upload()`, and the page's list of
 * unfinished uploads. Only `resumeUploads()` makes one (a class with private state, so the
 * typings accept nothing else as `resume`: an object of your own would have no way to run an upload).
 */
export class ResumeUploads {
  /** Where the records are kept. */
  readonly store: ResumeStore
  readonly #maxAge: number

  /** @internal `resumeUploads()` makes these. */
  constructor(store: ResumeStore, maxAge: number) {
    this.store = store
    this.#maxAge = maxAge
  }

  /** Unfinished uploads on record, newest first (expired records are dropped). */
  async list(): Promise<ResumeRecord[]> {
    const records = await Promise.all((await this.store.list()).map((record) => this.#valid(record)))
    return records.filter((record) => record !== undefined).sort((a, b) => b.createdAt - a.createdAt)
  }

  /**
   * Aborts a recorded upload on storage (AbortMultipartUpload, through the upload API's `/abort`
   * or with fresh token credentials) and forgets it. An upload already gone is forgotten too.
   * @throws (rejects with) `ApiError`, `S3Error` or `NetworkError` when the abort failed:
   * the record is kept, to try again.
   */
  async discard(
    record: ResumeRecord,
    options: Pick<TransferOptions & ApiOptions, 'transport' | 'apiHeaders'> = {},
  ): Promise<void> {
    const run = createRun({ ...options, api: record.api })
    const deadline = AbortSignal.timeout(run.options.cleanupTimeout)
    try {
      if (record.strategy === 'presigned') await postToApi(run, '/abort', { ticket: record.ticket }, deadline)
      else {
        const sign = await tokenSigner(record, run, deadline)
        const ofUpload = `?uploadId=${encodeURIComponent(record.uploadId)}`
        await send(run, (refused) => sign('DELETE', ofUpload, undefined, refused), {
          signal: deadline,
          endsUpload: true,
        })
      }
    } catch (error) {
      if (!isGone(error)) throw error
    }
    await this.store.delete(record.fingerprint)
  }

  /**
   * @internal The engine's (modes/request.ts): sends the upload with the run's `journal` hook
   * installed, from a record's reply when there is one, else from `request()` (the upload API's).
   */
  async run(
    file: Blob | PartStream,
    run: UploadRun<ResumedOptions>,
    request: () => Promise<Prepared>,
    sendUpload: (prepared: Prepared) => Promise<UploadResult>,
  ): Promise<UploadResult> {
    const { store } = this
    const { options } = run
    let api: string
    let fingerprint: string
    let found: ResumeRecord | undefined
    try {
      api = new URL(options.api ?? DEFAULT_API_PATH, globalThis.location?.href).href
      fingerprint = options.fingerprint ?? (await fileFingerprint(file as Blob, api))
      // A stream is only recorded (its bytes cannot be read again), never carried on; a record of
      // a known size is carried on by a file of that size only (a `fingerprint` given may name another).
      found = isBlob(file) ? await this.#valid(await store.get(fingerprint)) : undefined
      if (found && !found.sizeUnknown && found.size !== (file as Blob).size) found = undefined
    } catch {
      // No WebCrypto (a page served over plain http), no usable store (private browsing), a
      // relative `api` outside a page (the upload says what to set): upload, without resume.
      return sendUpload(await request())
    }
    const journal = createJournal(file, fingerprint, api, options, store, this.#maxAge)
    let prepared: Prepared | undefined
    // A record is carried on in its own mode, which an upload that named none accepts either way.
    if (found && (!options.strategy || found.strategy === options.strategy)) {
      try {
        prepared = await recall(found, (file as Blob).size, run, journal)
        run.strategy = found.strategy
      } catch (error) {
        if (!isGone(error)) throw error
        // Aborted or expired on storage, or its ticket expired: start afresh.
        journal.stored.clear()
        journal.uploadId = journal.partSize = journal.sizeUnknown = undefined
        await store.delete(fingerprint).catch(() => {})
      }
    }
    run.hooks.journal = journal
    try {
      // The upload API's reply (or the record's), for the record.
      journal.replied((prepared ??= await request()))
      const result = await sendUpload(prepared)
      await journal.forget()
      return result
    } catch (error) {
      // The engine aborted the upload on storage (unless told to leave its parts): nothing to carry on.
      if (!options.leavePartsOnError) await journal.forget()
      throw error
    }
  }

  async #valid(record: ResumeRecord | undefined) {
    if (record && record.expiresAt > Date.now()) return record
    if (record) await this.store.delete(record.fingerprint)
    return undefined
  }
}

/** What says a recorded upload cannot be carried on: gone from storage, or its ticket no longer valid. */
const isGone = (error: unknown) =>
  (error instanceof ApiError && (error.status === 403 || error.status === 404)) ||
  (error instanceof S3Error && (error.code === 'NoSuchUpload' || error.status === 403 || error.status === 404))

/**
 * The upload API's reply rebuilt from a record, with the parts storage holds in the journal. A
 * stream's record (`sizeUnknown`) is carried on by a file of `size` bytes: its parts are planned
 * from that size and the record's part size (the stream sent whole parts of it, so the parts
 * stored keep their places), and a presigned reply keeps no part count, as the ticket has none.
 */
async function recall(record: ResumeRecord, size: number, run: UploadRun, journal: Journal): Promise<Prepared> {
  const { signal } = run.options
  const {
    bucket,
    key,
    region,
    storeEndpoint: endpoint,
    forcePathStyle,
    uploadId,
    partSize,
    ticket,
    sizeUnknown,
  } = record
  const partCount = sizeUnknown ? Math.ceil(size / partSize) : record.partCount
  journal.sizeUnknown = sizeUnknown
  let reply: Prepared['reply']
  let parts: StoredPart[]
  if (record.strategy === 'presigned') {
    ;({ parts } = await postToApi<ListPartsReply>(run, '/list-parts', { ticket }, signal))
    reply = {
      key,
      bucket,
      region,
      endpoint,
      uploadId,
      partSize,
      ...(!sizeUnknown && { partCount }),
      ticket,
    } satisfies PresignedMultipartReply
  } else {
    const { token } = await postToApi<RefreshReply>(run, '/refresh', { ticket }, signal)
    const sign = createSigner(fromWire(token.Credentials), { bucket, key, region, endpoint, forcePathStyle })
    parts = await listStoredParts(sign, record, run)
    reply = { token, key, bucket, region, endpoint, forcePathStyle, ticket } satisfies TokenReply
    journal.uploadId = uploadId
    journal.partSize = partSize
  }
  const lastPartSize = size - (partCount - 1) * partSize
  for (const part of parts) {
    // A part whose size is not the plan's (a different file, a changed part size) is sent again.
    const expected = part.partNumber === partCount ? lastPartSize : partSize
    if (part.partNumber <= partCount && part.size === expected) journal.stored.set(part.partNumber, part.etag)
  }
  return { reply, contentType: record.contentType }
}

/** ListParts, page by page, with token credentials (they allow it when the server is `resumable`). */
async function listStoredParts(
  sign: ReturnType<typeof createSigner>,
  record: ResumeRecord,
  run: UploadRun,
): Promise<StoredPart[]> {
  const parts: StoredPart[] = []
  let marker = 0
  for (;;) {
    const query = `?part-number-marker=${marker}&uploadId=${encodeURIComponent(record.uploadId)}`
    const { body } = await send(run, (refused) => sign('GET', query, undefined, refused), {
      signal: run.options.signal,
    })
    for (const [, part = ''] of body.matchAll(/<Part>([\s\S]*?)<\/Part>/g)) {
      const field = (name: string) => xmlText(part, name) ?? ''
      parts.push({ partNumber: Number(field('PartNumber')), etag: field('ETag'), size: Number(field('Size')) })
    }
    const next = /<NextPartNumberMarker>(\d+)</.exec(body)?.[1]
    if (!/<IsTruncated>true</.test(body) || !next) return parts
    marker = Number(next)
  }
}

async function tokenSigner(record: ResumeRecord, run: UploadRun, signal: AbortSignal) {
  const { token } = await postToApi<RefreshReply>(run, '/refresh', { ticket: record.ticket }, signal)
  const { bucket, key, region, storeEndpoint: endpoint, forcePathStyle } = record
  return createSigner(fromWire(token.Credentials), { bucket, key, region, endpoint, forcePathStyle })
}

const fromWire = ({ AccessKeyId, SecretAccessKey, SessionToken }: TokenReply['token']['Credentials']) => ({
  accessKeyId: AccessKeyId,
  secretAccessKey: SecretAccessKey,
  sessionToken: SessionToken,
})

type Journal = PartJournal & {
  /** The upload API's reply (or one rebuilt from the record), for the record. */
  replied(prepared: Prepared): void
  forget(): Promise<void>
}

/**
 * Records this upload as it goes: once storage has created it (and only with a ticket to carry it
 * on with), then each part storage accepts. Writes are queued one after another; a store that
 * fails (private browsing, quota) only means no resume, never a failed upload.
 */
function createJournal(
  file: Blob | PartStream,
  fingerprint: string,
  api: string,
  options: ResumedOptions,
  store: ResumeStore,
  maxAge: number,
): Journal {
  let prepared: Prepared | undefined
  let record: ResumeRecord | undefined
  let writes: Promise<unknown> = Promise.resolve()
  const save = () => {
    const copy = record && { ...record, parts: [...record.parts] }
    writes = writes.then(() => copy && store.put(copy)).catch(() => {})
  }
  const journal: Journal = {
    stored: new Map(),
    replied(reply) {
      prepared = reply
    },
    started(uploadId, partSize, partCount) {
      const reply = prepared?.reply as (TokenReply & PresignedMultipartReply) | undefined
      if (!reply?.ticket) return
      const now = Date.now()
      const { name = 'file', lastModified = 0 } = file as Partial<File>
      const blob = isBlob(file)
      record = {
        fingerprint,
        strategy: 'token' in reply ? 'token' : 'presigned',
        api,
        bucket: reply.bucket,
        key: reply.key,
        region: reply.region,
        storeEndpoint: reply.endpoint,
        forcePathStyle: reply.forcePathStyle,
        uploadId,
        partSize,
        partCount: partCount ?? 0,
        ...(!blob && { sizeUnknown: true }),
        ticket: reply.ticket,
        contentType: prepared!.contentType,
        parts: [...journal.stored].map(([partNumber, etag]) => ({ partNumber, etag })),
        name: options.filename ?? name,
        size: blob ? file.size : 0,
        lastModified,
        handle: options.fileHandle,
        createdAt: now,
        expiresAt: now + maxAge,
      }
      save()
    },
    accepted(partNumber, etag) {
      record?.parts.push({ partNumber, etag })
      save()
    },
    async forget() {
      record = undefined
      await writes
      await store.delete(fingerprint).catch(() => {})
    },
  }
  return journal
}
