// The upload endpoint: an optional catch-all, so /api/s3-upload and /api/s3-upload/parts,
// /complete, /abort and /info all reach the one Web-standard handler.
import { createUploadHandler, type UploadHandler } from 'updraft-s3/server'

// Created on first use, not at import: `next build` loads this module without the S3_UPLOAD_*
// settings, and a handler created then would stop the build over missing settings.
let handle: UploadHandler | undefined
const upload = (request: Request) => (handle ??= createUploadHandler())(request)

export const POST = upload
export const GET = upload // …/info only: what the server can issue (optional)
