import type { JsonObject, PresignedReply, Strategy, TokenReply, UploadResult } from '../../protocol/wire.ts'
import { type Bytes, isBlob, isBytes, sizeOf, type UploadBody, withBody } from '../core/body.ts'
import type { ApiOptions, ResolvedOptions, TransferOptions } from '../core/options.ts'
import type { UploadRun } from '../core/run.ts'
import type { Prepared } from '../core/run-hooks.ts'
import type { PartStream } from '../core/stream-body.ts'
import type { ResumeUploads } from '../resume/resume.ts'
import type { ObjectExtras } from '../s3/target.ts'
import { postToApi } from '../transport/api.ts'

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
  /** The name the upload API builds the key from. @default the File's name, or 'file' for a Blob; required for bytes and streams */
  filename?: string
  /** The object's Content-Type, as the upload API signs it. @default the Blob's type; required for bytes and streams */
  contentType?: string
  /**
   * Resume after a reload: `resumeUploads()` records each multipart upload (IndexedDB in
   * browsers) and carries on one of the same file, re-sending only the parts storage lacks.
   */
  resume?: ResumeUploads
  /**
   * With `resume`: the File System Access handle the file came from (Chromium's
   * `showOpenFilePicker`), kept in the record so a later page can read the file again without
   * asking the person to pick it.
   */
  fileHandle?: FileSystemFileHandle
  /**
   * With `resume`: the name of this upload's record, in place of the file's own fingerprint
   * (`fileFingerprint(file, api)`). A stream has no fingerprint of its own: given one, its multipart
   * upload is recorded too (with its length unknown), and a later upload of the same bytes as a
   * file, under the same `fingerprint`, carries it on — how a recording kept in the browser is
   * finished after the page was closed (`updraft-s3/react/recording`). The caller then vouches
   * that the file starts with the bytes the stream gave. @default the file's fingerprint; none for a stream
   */
  fingerprint?: string
}

/**
 * What a mode adds to the upload request (token mode's `createMultipart`), given the body's size;
 * each mode also starts loading, beside the request, the code its reply will need (the signer,
 * the multipart machinery). Per mode, so the other mode's pages never ship it.
 */
export type ModeFields = Partial<Record<Strategy, RequestFields>>

/** One mode's {@link ModeFields}. */
export type RequestFields = (
  size: number | undefined,
  options: ResolvedOptions<UploadOptions>,
) => { createMultipart?: true; form?: true }

/**
 * How `upload()` chooses its strategy when none is named (flow/default-strategy.ts): entries of one
 * mode have none of it, so their pages never ship it.
 */
export interface StrategyChoice {
  /** The strategy to ask for first. */
  start(options: UploadOptions): Strategy
  /** Sends the upload request (`ask`, in `run.strategy`), and asks again in another strategy when the API refuses it. */
  request<Reply>(run: UploadRun<UploadOptions>, ask: () => Promise<Reply>): Promise<Reply>
}

/**
 * The first request of every upload: the upload API decides key, bucket and permission. It may
 * create a multipart upload (presigned mode; token mode's `createMultipart`), so an abort lets
 * the request finish (its reply names what to clean up) rather than cancel it. `choice`, when
 * the upload named no strategy, may ask once more in another mode.
 */
export function requestUpload(
  file: Bytes | PartStream,
  run: UploadRun<UploadOptions>,
  fields?: ModeFields,
  choice?: StrategyChoice,
) {
  const ask = () => askForUpload(file, run, fields)
  return choice ? choice.request(run, ask) : ask()
}

async function askForUpload(file: Bytes | PartStream, run: UploadRun<UploadOptions>, fields?: ModeFields) {
  const { options, strategy } = run
  // The checksum opt-in refuses what the mode cannot carry before the upload API acts (it may create a multipart upload).
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
    ...fields?.[strategy!]?.(size, options),
    strategy,
    // The same marker in next-s3-upload's form, so its API routes understand the request.
    _nextS3: { strategy: strategy === 'presigned' ? 'presigned' : 'aws-sdk' },
  }
  // An upload API that creates a multipart upload names it in its reply: an abort lets the request
  // finish, so what was created is cleaned up.
  const reply = await postToApi<TokenReply | PresignedReply>(
    run,
    '',
    body,
    options.signal,
    strategy === 'presigned' || !!body.createMultipart,
  )
  return { reply, contentType }
}

/**
 * Every entry's path after its checks: the upload API's reply (or, with `resume`, one rebuilt from
 * a record), then `sendWith` moves the bytes. An entry of one mode names its strategy; `upload()`
 * gives a `choice`.
 */
export async function prepareAndSend(
  file: UploadBody,
  run: UploadRun<UploadOptions>,
  sendWith: (prepared: Prepared, body: Bytes | PartStream) => Promise<UploadResult>,
  fields?: ModeFields,
  choice?: StrategyChoice,
): Promise<UploadResult> {
  const { options } = run
  run.strategy = choice?.start(options) ?? options.strategy
  return withBody(
    file,
    options,
    async (body) => {
      const request = () => requestUpload(body, run, fields, choice)
      const send = (prepared: Prepared) => sendWith(prepared, body)
      // Only a Blob has a fingerprint to be found again by after a reload; a stream of more than one
      // part is journaled under the `fingerprint` it is given; bytes never are.
      return options.resume && (isBlob(body) || (options.fingerprint !== undefined && !isBytes(body)))
        ? options.resume.run(body, run as UploadRun, request, send)
        : send(await request())
    },
    true,
  )
}
