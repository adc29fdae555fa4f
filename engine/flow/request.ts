import { DEFAULT_ENDPOINT, type JsonObject, type PresignedReply, type Strategy, type TokenReply, type UploadResult } from '../../protocol/wire.ts'
import { ApiError } from '../errors.ts'
import { type Bytes, isBlob, isBytes, sizeOf, type UploadBody, withBody } from './body.ts'
import type { PartStream } from './stream-body.ts'
import { postToApi } from '../http/api.ts'
import type { ApiOptions, ResolvedOptions, TransferOptions } from '../options.ts'
import type { UploadRun } from '../run.ts'
import type { Prepared } from '../resume/journal.ts'
import type { ObjectExtras } from '../upload-object.ts'

/**
 * Upload APIs this page has heard answer `TokenModeUnavailable` (no STS: the embedded dev store,
 * R2, B2): uploads that name no strategy go to them presigned at once, for the page's life.
 */
const presignedOnly = new Set<string>()

/**
 * Options of {@link upload}, {@link uploadWithToken} and {@link uploadPresigned}: how to reach your
 * upload API ({@link ApiOptions}), how to move the bytes ({@link TransferOptions}), and what to
 * tell the API about the file. `objectHeaders`/`partHeaders` (SSE-C, tags: `ObjectExtras`) work in
 * token mode only.
 */
export interface UploadOptions<Metadata = JsonObject> extends TransferOptions, ApiOptions, ObjectExtras {
  /**
   * Fields the server's `metadata` option validates and binds into the upload's ticket: its `key`
   * callback and `onUploadComplete` see them as validated, never as re-sent later. A server
   * without that option refuses them.
   */
  metadata?: Metadata
  /**
   * 'token': your API issues short-lived credentials for one key (it needs an STS) and the page
   * signs its own requests. 'presigned': your API presigns every request (no SigV4 in the page;
   * works on every store).
   * @default 'token', as the protocol has it; where the API answers that it has no STS, the
   * upload asks once more, presigned, and this page's later uploads to that API go presigned at once
   * (one extra round trip, once). A named `'token'` is never changed: the API's refusal is thrown.
   */
  strategy?: Strategy
  /** Extra fields merged into the upload request to your API (never sent to storage), handed to the server's `key` callback. @default none */
  apiBody?: Record<string, unknown>
  /** The name the endpoint builds the key from. @default the File's name, or 'file' for a Blob; required for bytes and streams */
  filename?: string
  /** The object's Content-Type, as the endpoint signs it. @default the Blob's type; required for bytes and streams */
  contentType?: string
  /**
   * Resume after a reload: `resumeUploads()` records each multipart upload (IndexedDB in
   * browsers) and carries on one of the same file, re-sending only the parts storage lacks.
   */
  resume?: Resumer
  /**
   * With `resume`: the File System Access handle the file came from (Chromium's
   * `showOpenFilePicker`), kept in the record so a later page can read the file again without
   * asking the person to pick it.
   */
  fileHandle?: FileSystemFileHandle
}

/**
 * The `resume` option (`resumeUploads()` makes one): runs one upload with a journal, from a record
 * when there is one. Its method is the engine's business, not the page's.
 */
export interface Resumer {
  /**
   * @internal Sends the upload with the run's `journal` hook installed: from a record's reply
   * when there is one, else from `request()` (the endpoint's).
   */
  run(file: Blob, run: UploadRun, request: () => Promise<Prepared>, send: (prepared: Prepared) => Promise<UploadResult>): Promise<UploadResult>
}

/** What one mode adds to the upload request (token mode's `createMultipart`), so the other mode's pages never ship it. */
export type ModeFields = (size: number | undefined, options: ResolvedOptions<UploadOptions>) => { createMultipart?: true }

/**
 * The first request of every upload: the endpoint decides key, bucket and permission. It may
 * create a multipart upload (presigned mode; token mode's `createMultipart`), so an abort lets
 * the request finish (its reply names what to clean up) rather than cancel it. An upload that
 * named no strategy, refused token mode by an API without an STS, asks again presigned.
 */
export async function requestUpload(file: Bytes | PartStream, run: UploadRun<UploadOptions>, fields?: ModeFields) {
  try {
    return await askForUpload(file, run, fields)
  } catch (error) {
    if (!(error instanceof ApiError && error.code === 'TokenModeUnavailable') || !mayChooseStrategy(run.options)) throw error
    presignedOnly.add(apiOf(run.options))
    run.strategy = 'presigned'
    return askForUpload(file, run)
  }
}

async function askForUpload(file: Bytes | PartStream, run: UploadRun<UploadOptions>, fields?: ModeFields) {
  const { options, strategy } = run
  // The checksum opt-in refuses what the mode cannot carry before the endpoint acts (it may create a multipart upload).
  options.checksum?.({ ...options, strategy })
  const contentType = options.contentType ?? (file as Blob).type
  // A stream's length is known when declared; else only at its end (`sizeUnknown`, protocol/wire.ts).
  const size = sizeOf(file)
  const body = {
    // First, so a `metadata` field of apiBody (the same field) is not dropped.
    metadata: options.metadata,
    ...options.apiBody,
    filename: options.filename ?? (file as File).name ?? 'file',
    filetype: contentType,
    filesize: size,
    sizeUnknown: size === undefined || undefined,
    ...(strategy === 'token' && fields?.(size, options)),
    strategy,
    // The same marker in next-s3-upload's form, so its API routes understand the request.
    _nextS3: { strategy: strategy === 'presigned' ? 'presigned' : 'aws-sdk' },
  }
  // An endpoint that creates a multipart upload names it in its reply: an abort lets the request
  // finish, so what was created is cleaned up.
  const reply = await postToApi<TokenReply | PresignedReply>(run, '', body, options.signal, strategy === 'presigned' || !!body.createMultipart)
  return { reply, contentType }
}

/**
 * The strategy the upload starts with: the one named, else token mode, the protocol's default —
 * or presigned for an API this page knows has no STS. Headers only token mode can carry
 * (`objectHeaders`, `partHeaders`: SSE-C, tags) keep token mode, and its refusal.
 */
function startingStrategy(options: UploadOptions): Strategy {
  return options.strategy ?? (mayChooseStrategy(options) && presignedOnly.has(apiOf(options)) ? 'presigned' : 'token')
}

const mayChooseStrategy = (options: UploadOptions) => !options.strategy && !options.objectHeaders && !options.partHeaders

const apiOf = (options: UploadOptions) => options.api ?? DEFAULT_ENDPOINT

/**
 * Every entry's path after its checks: the endpoint's reply (or, with `resume`, one rebuilt from
 * a record), then `sendWith` moves the bytes.
 */
export async function prepareAndSend(
  file: UploadBody,
  run: UploadRun<UploadOptions>,
  sendWith: (prepared: Prepared, body: Bytes | PartStream) => Promise<UploadResult>,
  fields?: ModeFields,
): Promise<UploadResult> {
  const { options } = run
  run.strategy = startingStrategy(options)
  // The API signs every header in presigned mode: extra ones (SSE-C, tags) would be dropped silently.
  if (run.strategy === 'presigned' && (options.objectHeaders || options.partHeaders)) {
    throw new TypeError("updraft: objectHeaders and partHeaders (SSE-C, tags) need strategy: 'token'")
  }
  return withBody(file, options, async (body) => {
    const request = () => requestUpload(body, run, fields)
    const send = (prepared: Prepared) => sendWith(prepared, body)
    // Only a Blob has a fingerprint to be found again by after a reload: bytes and streams are never journaled.
    return options.resume && isBlob(body) ? options.resume.run(body, run as UploadRun, request, send) : send(await request())
  }, true)
}
