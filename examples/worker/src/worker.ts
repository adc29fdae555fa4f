import { createUploadHandler } from 'updraft-s3/server'

// Created on first request: with nodejs_compat and a compatibility date on or after 2025-04-01,
// the worker's vars and secrets (S3_UPLOAD_KEY, S3_UPLOAD_SECRET, S3_UPLOAD_BUCKET,
// S3_UPLOAD_REGION, S3_UPLOAD_ENDPOINT, …) are on process.env, where the handler reads them.
let handle: ((request: Request) => Promise<Response>) | undefined

export default {
  fetch(request: Request): Promise<Response> | Response {
    const { pathname } = new URL(request.url)
    if (pathname !== '/api/s3-upload' && !pathname.startsWith('/api/s3-upload/'))
      return new Response('Not found', { status: 404 })
    handle ??= createUploadHandler()
    return handle(request)
  },
}
