// The upload API and the page in Hono, on Node, from one origin. createUploadHandler() is a Web
// (Request) => Response handler: Hono hands it the raw Request. It reads S3_UPLOAD_KEY,
// S3_UPLOAD_SECRET, S3_UPLOAD_BUCKET, S3_UPLOAD_REGION (and S3_UPLOAD_ENDPOINT for R2, MinIO, Ceph, B2).
import { serve } from '@hono/node-server'
import { serveStatic } from '@hono/node-server/serve-static'
import { Hono } from 'hono'
import { createUploadHandler } from 'updraft-s3/server'

const handle = createUploadHandler()

const app = new Hono()
// The upload API and everything under it (…/parts, …/complete, …/abort, …/info).
app.all('/api/s3-upload', (c) => handle(c.req.raw))
app.all('/api/s3-upload/*', (c) => handle(c.req.raw))
// The page (public/index.html and the public/page.js that `npm run build` writes), from the same
// origin: the upload API refuses a request whose Origin is not its own host.
app.use('/*', serveStatic({ root: './public' }))

serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000), hostname: process.env.HOST ?? 'localhost' }, (info) =>
  console.log(`Listening on http://${info.address}:${info.port}`),
)
