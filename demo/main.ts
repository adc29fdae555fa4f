// `npm start`: the demo page, the upload endpoint and, unless S3_UPLOAD_* names a store, an
// embedded s3rver, all on this machine. README.md, "Try it: npm start".
import { join } from 'node:path'
import { DEFAULT_RATE_LIMIT } from '../server/fastify.ts'
import { DEFAULT_PORT, EMBEDDED_TOKEN_REASON, startApp } from './app.ts'
import { PROJECT_ROOT } from './build-page.ts'

const DATA_DIR = join(PROJECT_ROOT, '.data', 's3')

async function main() {
  const port = parsePort(process.env.PORT)
  const running = await startApp({ port, dataDir: DATA_DIR, log: (line) => console.log(line) })

  let stopping = false
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) {
      // A second Ctrl-C means now.
      console.log('Stopping at once.')
      process.exit(130)
    }
    stopping = true
    console.log(`\n${signal}: stopping…`)
    await running.close()
    console.log('Stopped.')
    process.exit(0)
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)

  const info = await running.app.inject({ method: 'GET', url: `${running.prefix}/info` }).then((reply) => reply.json())
  console.log(`Updraft demo: ${running.url}`)
  console.log(`  endpoint  ${running.url}${running.prefix}`)
  if (running.embedded) {
    console.log(`  storage   ${running.store} (embedded; objects in ${relative(running.embedded.directory)})`)
    console.log(`  modes     presigned. ${EMBEDDED_TOKEN_REASON}.`)
    console.log(`  signing   with s3rver's own key: it has no STS, so no narrower credential exists (fine on loopback, never on the internet)`)
  } else {
    console.log(`  storage   ${running.store} (from S3_UPLOAD_*)`)
    console.log(`  modes     presigned${info.token ? ' and token' : `. Token mode is off: ${info.tokenUnavailableReason}`}`)
    console.log(`  signing   ${running.presignWith === 'session' ? 'with a session credential that may only upload under the key prefix' : "with the server's own key (no STS): give it only the upload actions (README, Security)"}`)
  }
  console.log(`  limits    ${DEFAULT_RATE_LIMIT.max} endpoint requests per minute per client`)
  console.log('Press Ctrl-C to stop.')
}

function parsePort(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_PORT
  const port = Number(value)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new RangeError(`PORT must be a port number (0-65535), got '${value}'`)
  }
  return port
}

const relative = (path: string) => (path.startsWith(PROJECT_ROOT) ? path.slice(PROJECT_ROOT.length) : path)

main().catch((error: unknown) => {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'EADDRINUSE') {
    console.error(`updraft: could not start: port ${process.env.PORT || DEFAULT_PORT} is in use; set PORT to another one`)
  } else if (error instanceof TypeError || error instanceof RangeError) {
    // Configuration mistakes: the message says what to fix, no stack needed.
    console.error(`updraft: could not start: ${error.message.replace(/^updraft: /, '')}`)
  } else {
    console.error('updraft: could not start:', error)
  }
  process.exit(1)
})
