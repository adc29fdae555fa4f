// `npm start`: the demo page, the upload API and, unless S3_UPLOAD_* names a store, an
// embedded s3rver, all on this machine. docs/demo.md.
import { DEFAULT_RATE_LIMIT } from '../server/fastify.ts'
import { formatBytes } from '../src/format.ts'
import { DEFAULT_PORT, EMBEDDED_TOKEN_REASON, startApp } from './app.ts'
import { PROJECT_ROOT } from './build-page.ts'
import { stopWithLauncher } from './launcher.ts'
import { readableLogger } from './readable-log.ts'
import { demoSettings } from './settings.ts'

async function main() {
  const settings = demoSettings(process.env)
  const { maxFileSize, allowedTypes } = settings
  const running = await startApp({
    port: settings.port,
    storePort: settings.storePort,
    dataDir: settings.dataDir,
    config: { maxFileSize, allowedTypes },
    log: (line) => console.log(line),
    logger: readableLogger((line) => console.error(line)),
  })

  let stopping = false
  const stop = async (reason: string) => {
    if (stopping) {
      // A second Ctrl-C means now.
      console.log('Stopping at once.')
      process.exit(130)
    }
    stopping = true
    console.log(`\n${reason}: stopping…`)
    await running.close()
    console.log('Stopped.')
    process.exit(0)
  }
  process.on('SIGINT', () => void stop('SIGINT'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
  stopWithLauncher(() => void stop('npm was stopped'))

  const info = await running.app.inject({ method: 'GET', url: `${running.prefix}/info` }).then((reply) => reply.json())
  console.log(`Updraft demo: ${running.url}`)
  console.log(`  upload API  ${running.url}${running.prefix}`)
  if (running.embedded) {
    console.log(`  storage     ${running.store} (embedded; objects in ${relative(running.embedded.directory)})`)
    console.log(`  modes       presigned. ${EMBEDDED_TOKEN_REASON}.`)
    console.log(
      `  signing     with s3rver's own key: it has no STS, so no narrower credential exists (fine on loopback, never on the internet)`,
    )
  } else {
    console.log(`  storage     ${running.store} (from S3_UPLOAD_*)`)
    console.log(
      `  modes       presigned${info.token ? ' and token' : `. Token mode is off: ${info.tokenUnavailableReason}`}`,
    )
    console.log(
      `  signing     ${running.presignWith === 'session' ? 'with a session credential that may only upload under the key prefix' : "with the server's own key (no STS): give it only the policy npx updraft-s3 doctor prints (server/key-policy.ts)"}`,
    )
  }
  console.log(`  limits      ${DEFAULT_RATE_LIMIT.max} upload API requests per minute per client`)
  console.log(`  files       ${describeFileLimits(maxFileSize, allowedTypes)}`)
  console.log('Press Ctrl-C to stop.')
}

/** What the page will accept, or how to make it refuse something. */
function describeFileLimits(maxFileSize: number | undefined, allowedTypes: string[] | undefined): string {
  if (maxFileSize === undefined && allowedTypes === undefined)
    return 'any size and type (set UPDRAFT_MAX_FILE_SIZE, UPDRAFT_ALLOWED_TYPES to limit them)'
  const size = maxFileSize === undefined ? 'any size' : `up to ${formatBytes(maxFileSize)}`
  return `${size}; ${allowedTypes ? `types ${allowedTypes.join(', ')}` : 'any type'}`
}

const relative = (path: string) => (path.startsWith(PROJECT_ROOT) ? path.slice(PROJECT_ROOT.length) : path)

main().catch((error: unknown) => {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'EADDRINUSE') {
    const port = (error as { port?: number }).port
    const page = port !== undefined && String(port) === String(process.env.PORT || DEFAULT_PORT)
    const what = page ? 'the page' : 'the embedded store'
    console.error(
      `updraft: could not start: port ${port ?? '?'} (${what}) is in use, perhaps by another npm start; set ${page ? 'PORT' : 'UPDRAFT_S3_PORT'} to another one`,
    )
  } else if (error instanceof TypeError || error instanceof RangeError) {
    // Configuration mistakes: the message says what to fix, no stack needed.
    console.error(`updraft: could not start: ${error.message.replace(/^updraft: /, '')}`)
  } else {
    console.error('updraft: could not start:', error)
  }
  process.exit(1)
})
