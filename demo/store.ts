// `npm run store`: the embedded store alone (s3rver plus the ListParts and AbortMultipartUpload it
// lacks, one bucket whose CORS rule allows any origin), for an app of your own to upload to while
// you develop it. It prints the S3_UPLOAD_* settings that point an app at it.
import { startEmbeddedS3 } from './embedded-s3.ts'
import { demoSettings } from './settings.ts'

async function main() {
  const { storePort, dataDir } = demoSettings(process.env)
  const store = await startEmbeddedS3({ port: storePort, directory: dataDir, log: (line) => console.log(`  ${line}`) })
  const { accessKeyId, secretAccessKey } = store.credentials
  console.log(`Embedded S3 store: ${store.endpoint} · bucket ${store.bucket} · objects in ${store.directory}`)
  console.log('Point your app at it (presigned mode: this store has no STS; keep it on loopback, its key is public):')
  console.log(`  export S3_UPLOAD_KEY=${accessKeyId} S3_UPLOAD_SECRET=${secretAccessKey} S3_UPLOAD_BUCKET=${store.bucket} S3_UPLOAD_REGION=${store.region}`)
  console.log(`  export S3_UPLOAD_ENDPOINT=${store.endpoint} S3_UPLOAD_FORCE_PATH_STYLE=true S3_UPLOAD_TICKET_SECRET=<a random value of your own>`)
  console.log('Press Ctrl-C to stop.')
  const stop = () => void store.close().then(() => process.exit(0))
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

main().catch((error: unknown) => {
  const { code, port } = error as NodeJS.ErrnoException & { port?: number }
  if (code === 'EADDRINUSE') console.error(`updraft: could not start the store: port ${port ?? '?'} is in use, perhaps by npm start; set UPDRAFT_S3_PORT to another one`)
  else console.error('updraft: could not start the store:', error)
  process.exit(1)
})
