import type { Queue, UploadOptions } from '../engine/index.ts'
import type { MetadataOf, Strategy } from '../protocol/wire.ts'

// The hooks' option types, apart from the hook: the list controls (upload-controls.ts) take the
// per-upload options too, and importing them from the hook's file made the two files import each
// other.

/** Refuses a file before any request (an Error says why), or lets it through (undefined). */
export type FileCheck = (file: File) => Error | undefined

/** The hooks' `prepare`: turns a picked file into the one to send (e.g. `shrinkImages()` of `updraft-s3/images`). */
export type PrepareFile = (file: File) => Promise<File> | File

/** Defaults for every `uploadToS3` call of one hook: any engine option, plus the hook's own. */
export interface UseS3UploadOptions extends Omit<UploadOptions, 'signal' | 'onProgress' | 'pauseSignal' | 'strategy'> {
  /**
   * 'token': the upload API issues short-lived credentials for one key and the page signs its own
   * requests; it needs an STS, which R2, B2 and many other stores lack. 'presigned': the upload API
   * presigns every request to storage, so the page holds no credentials; it works on every
   * S3-compatible store.
   * @default 'token'; where the upload API answers that it has no STS, presigned (asked once per page)
   */
  strategy?: Strategy
  /**
   * The connection budget shared by this hook's uploads. Default: one queue of 4 shared by every
   * hook on the page, so many files never open more than 4 connections to storage together.
   */
  queue?: Queue
  /**
   * Runs on each file `addFiles` gets, before any request: an Error lists the file as refused
   * with it, and nothing is sent. `useS3Dropzone` passes the upload API's limits here
   * (src/file-checks.ts). @default none: the upload API alone decides
   */
  check?: FileCheck
  /**
   * Runs on each file before the upload API is asked; the File it gives is what goes: its name,
   * type and size are announced, `check` judges it (not the picked one), and `/complete` verifies
   * its bytes. E.g. `shrinkImages()` from `updraft-s3/images`. One that throws or gives no File
   * ends that file's entry with a `PrepareError`, and nothing is sent. The entry's `file` stays
   * the one picked (`retry` prepares it again); its `size` becomes the prepared file's.
   * @default none: files go as picked
   */
  prepare?: PrepareFile
  /** Ask before the page is left or reloaded while uploads run. @default true */
  warnBeforeLeaving?: boolean
}

/**
 * Per-upload options: next-s3-upload's `endpoint.request` form under the name `api` (`endpoint`
 * means storage here), its own names kept inside (`url`, `body`, `headers`), plus any engine
 * option but `pauseSignal` (the entry's `pause()` and `resume()`).
 */
export interface UploadToS3Options<Handler = unknown>
  extends Omit<UploadOptions<MetadataOf<Handler>>, 'api' | 'apiBody' | 'apiHeaders' | 'queue' | 'pauseSignal'> {
  /**
   * Where and what to ask your upload API for this upload: next-s3-upload's `endpoint` option,
   * renamed (its `request` inside unchanged). @default the hook's `api`, `apiBody`, `apiHeaders`
   */
  api?: {
    request?: {
      /** @default the hook's `api`, else '/api/s3-upload' */
      url?: string
      /** Merged into the upload request, over the hook's `apiBody`. */
      body?: Record<string, unknown>
      /** Sent to your API only, over the hook's `apiHeaders`. */
      headers?: HeadersInit
    }
  }
}
