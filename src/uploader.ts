import { createContext } from 'react'
import { type UploadOptions, type UploadResult, upload } from '../engine/index.ts'

/** What moves one file's bytes: the engine's `upload`, or a stand-in the React tests settle by hand. */
export type Uploader = (file: File, options: UploadOptions) => Promise<UploadResult>

/**
 * Where the hooks take their `Uploader` from. No page sets it, so every page runs the engine; the
 * React tests provide a stand-in (tests/helpers/stub-uploader.ts). Deliberately absent from the
 * package's entries and from every option type: it is a seam for tests, not something a user tunes.
 */
export const UploaderContext = createContext<Uploader>(upload)
