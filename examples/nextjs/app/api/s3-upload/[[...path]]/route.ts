// The upload API: an optional catch-all, so /api/s3-upload and /api/s3-upload/parts,
// /complete, /abort and /info all reach the one Web-standard handler.
import { createLazyUploadHandler } from 'updraft-s3/server'

// Created on the first request, not at import: `next build` loads this module without the
// S3_UPLOAD_* settings. A missing one is then answered 500 ServerMisconfigured (pages do not retry
// it) and logged with what to set.
const upload = createLazyUploadHandler()

export const POST = upload
export const GET = upload // …/info only: what the server can issue (optional)
