// `npm run store`: the embedded store alone (s3rver plus the ListParts and AbortMultipartUpload it
// lacks, one bucket whose CORS rule allows any origin), for an app of your own to upload to while
// you develop it. It prints the S3_UPLOAD_* settings that point an app at it.
import { randomBytes } from 'node:crypto'
import { startEmbeddedS3 } from './embedded-s3.ts'
import { demoSettings } from './settings.ts'

async function main() {
  const { storePort, dataDir } = demoSettings(process.env)
  const store = await startEmbeddedS3({ port: storePort, directory: dataDir, log: (line) => console.log(`  ${line}`) })
  const { accessKeyId, secretAccessKey } = store.credentials
  console.log(`Embedded S3 store: ${store.endpoint} · bucket ${store.bucket} · objects in ${store.directory}`)
  const settings = {
    S3_UPLOAD_KEY: accessKeyId,
    S3_UPLOAD_SECRET: secretAccessKey,
    S3_UPLOAD_BUCKET: store.bucket,
    S3_UPLOAD_REGION: store.region,
    S3_UPLOAD_ENDPOINT: store.endpoint,
    S3_UPLOAD_FORCE_PATH_STYLE: 'true',
    // Generated here, so the lines paste as they are (a placeholder broke the whole line in bash).
    S3_UPLOAD_TICKET_SECRET: randomBytes(32).toString('base64url'),
  }
  console.log('Point your app at it (presigned mode: this store has no STS; keep it on loopback, its key is public).')
  console.log('In the shell that starts your app, paste the line for your shell:')
  console.log(`  bash, zsh:   ${shellLine(settings)}`)
  console.log(`  PowerShell:  ${powerShellLine(settings)}`)
  console.log('Then start your app, and check the settings with: npx updraft-s3 doctor')
  console.log('Press Ctrl-C to stop.')
  const stop = () => void store.close().then(() => process.exit(0))
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

/** One `export` line for POSIX shells; every value single-quoted, so nothing in it is read as syntax. */
const shellLine = (settings: Record<string, string>) =>
  `export ${Object.entries(settings).map(([name, value]) => `${name}='${value.replace(/'/g, `'\\''`)}'`).join(' ')}`

/** The same for PowerShell: one `$env:` assignment per setting. */
const powerShellLine = (settings: Record<string, string>) =>
  Object.entries(settings).map(([name, value]) => `$env:${name}='${value.replace(/'/g, "''")}'`).join('; ')

main().catch((error: unknown) => {
  const { code, port } = error as NodeJS.ErrnoException & { port?: number }
  if (code === 'EADDRINUSE') console.error(`updraft: could not start the store: port ${port ?? '?'} is in use, perhaps by npm start; set UPDRAFT_S3_PORT to another one`)
  else console.error('updraft: could not start the store:', error)
  process.exit(1)
})
