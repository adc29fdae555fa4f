// The upload endpoint in Hono, on Node. createUploadHandler() is a Web (Request) => Response
// handler: Hono hands it the raw Request. It reads S3_UPLOAD_KEY, S3_UPLOAD_SECRET,
// S3_UPLOAD_BUCKET, S3_UPLOAD_REGION (and S3_UPLOAD_ENDPOINT for R2, MinIO, Ceph, B2).
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { createUploadHandler } from 'updraft-s3/server'

const handle = createUploadHandler()

const app = new Hono()
// The endpoint and everything under it (…/parts, …/complete, …/abort, …/info).
app.all('/api/s3-upload', (c) => handle(c.req.raw))
app.all('/api/s3-upload/*', (c) => handle(c.req.raw))
app.get('/', (c) => c.text('Upload endpoint at /api/s3-upload'))

serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000), hostname: process.env.HOST ?? 'localhost' }, (info) =>
  console.log(`Listening on http://${info.address}:${info.port}`),
)
