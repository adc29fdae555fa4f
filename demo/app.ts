import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { type EmbeddedS3, startEmbeddedS3 } from '../cli/embedded-s3.ts'
import { DEFAULT_API_PATH } from '../protocol/wire.ts'
import { type PresignWith, resolveConfig, type UploadHandlerConfig } from '../server/config.ts'
import { type S3UploadPluginOptions, s3Upload } from '../server/fastify.ts'
import { describeStore } from '../server/info.ts'
import { DEMO_DIR, ensureDemoBuilt } from './build-page.ts'
import { demoCompletions } from './completions.ts'
import { serveStatic } from './static.ts'

export const DEFAULT_PORT = 3000

/**
 * s3rver cannot issue credentials; the demo shows this where the token switch would be. Worded as
 * what token mode needs and how to try it: on a first visit nothing is wrong.
 */
export const EMBEDDED_TOKEN_REASON =
  'Token mode needs a store with STS, which the embedded s3rver lacks; to try it locally, run npm run demo:rgw (Ceph RGW with STS), or point S3_UPLOAD_* and S3_UPLOAD_STS_* at AWS or Ceph RGW'

export interface AppOptions {
  /** 0 picks a free port. @default 3000 */
  port?: number
  /** Loopback only by default: the embedded store's bucket is open to anyone who can reach it. @default 'localhost' */
  host?: string
  /**
   * The upload API's settings (server/config.ts) and `prefix`. The store comes from here or from
   * the S3_UPLOAD_* environment; when neither names one, an embedded s3rver is started.
   */
  config?: S3UploadPluginOptions
  /** The embedded store's data folder. @default a temporary folder, removed on close */
  dataDir?: string
  /** The embedded store's port on 127.0.0.1: fixed, object URLs outlive a restart. @default 0, a free port */
  storePort?: number
  /** Build dist/demo first when it is missing or stale (demo/build-page.ts). @default true */
  buildDemo?: boolean
  /** Progress lines ("Building the demo page…"). @default none */
  log?: (message: string) => void
  /** Fastify's logger; upload API failures are logged through it. @default { level: 'warn' } */
  logger?: FastifyServerOptions['logger']
  /** Behind a load balancer: take the client's address from X-Forwarded-For (Fastify's `trustProxy`). @default false */
  trustProxy?: FastifyServerOptions['trustProxy']
}

/** How often a configured store (not the embedded one, which cannot list uploads) is swept of stale multipart uploads. */
export const DEMO_SWEEP_SECONDS = 60 * 60

export interface RunningApp {
  /** `http://localhost:3000`: the page; the upload API is at `{url}{prefix}`. */
  url: string
  prefix: string
  /** What the page's "Storage:" line shows, e.g. "embedded s3rver at http://127.0.0.1:43123 · bucket uploads". */
  store: string
  /** What signs the URLs the page gets (server/config.ts `presignWith`). */
  presignWith: PresignWith
  /** Set when the app started its own s3rver. */
  embedded?: EmbeddedS3
  /** Every verified upload, by uploadId: what the demo's `onUploadComplete` recorded. */
  completed: ReturnType<typeof demoCompletions>['records']
  app: FastifyInstance
  /** Stops Fastify (dropping open connections), then the embedded store if there is one. */
  close(): Promise<void>
}

/** The `npm start` app — the page, the upload API and, without a configured store, an embedded s3rver. */
export async function startApp(options: AppOptions = {}): Promise<RunningApp> {
  const { port = DEFAULT_PORT, host = 'localhost', config = {}, log = () => {} } = options
  const prefix = config.prefix ?? DEFAULT_API_PATH
  if (options.buildDemo ?? true) await ensureDemoBuilt(log)

  // Checked before anything starts: a half-set S3_UPLOAD_* environment names every missing variable.
  const resolved = namesStore(config, process.env) ? resolveConfig(config) : undefined
  const embedded = resolved
    ? undefined
    : await startEmbeddedS3({ directory: options.dataDir, port: options.storePort, log })
  const store = embedded
    ? `embedded s3rver at ${embedded.endpoint} · bucket ${embedded.bucket}`
    : describeStore(resolved!)

  const app = Fastify({
    logger: options.logger ?? { level: 'warn' },
    forceCloseConnections: true,
    trustProxy: options.trustProxy ?? false,
  })
  // Recorded in memory, as an app would in its database; a config's own callback takes its place.
  const { records: completed, onUploadComplete } = demoCompletions()
  const withCallback = { onUploadComplete, ...config }
  try {
    // The page resumes uploads after a reload (issue 13): /list-parts on.
    const resumable = { resumable: true, ...withCallback }
    await app.register(
      s3Upload,
      embedded ? embeddedConfig(resumable, embedded, store) : { sweepEverySeconds: DEMO_SWEEP_SECONDS, ...resumable },
    )
    serveStatic(app, DEMO_DIR)
    await app.listen({ port, host })
  } catch (error) {
    await app.close().catch(() => {})
    await embedded?.close()
    throw error
  }

  const { port: actualPort } = app.server.address() as AddressInfo
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host
  let closing: Promise<void> | undefined
  return {
    url: `http://${shownHost}:${actualPort}`,
    prefix,
    store,
    presignWith: resolved?.presignWith ?? 'server-key',
    embedded,
    completed,
    app,
    close: () =>
      (closing ??= (async () => {
        try {
          await app.close()
        } finally {
          await embedded?.close()
        }
      })()),
  }
}

/**
 * The upload API on the embedded store: its fixed key pair, path-style, and token mode marked off
 * (so a token request is refused with that reason, and nothing calls out to an STS). Tickets are
 * keyed on a secret of this process: derived from s3rver's well-known key, anyone could forge them.
 */
function embeddedConfig(config: S3UploadPluginOptions, store: EmbeddedS3, name: string): S3UploadPluginOptions {
  return {
    ...config,
    ...store.credentials,
    bucket: store.bucket,
    region: store.region,
    endpoint: store.endpoint,
    forcePathStyle: true,
    // Explicit, so a stray S3_UPLOAD_STS_MODE cannot demand a role ARN for a store without STS.
    sts: { mode: 'federation' },
    info: { store: name, tokenUnavailableReason: EMBEDDED_TOKEN_REASON, ...config.info },
    ticketSecret: config.ticketSecret ?? randomBytes(32).toString('base64url'),
  }
}

/** Whether a store is configured at all, in `config` or the environment (even partly: then resolveConfig says what is missing). */
function namesStore(config: UploadHandlerConfig, env: NodeJS.ProcessEnv): boolean {
  const fields = [config.accessKeyId, config.secretAccessKey, config.bucket, config.region, config.endpoint]
  const variables = ['S3_UPLOAD_KEY', 'S3_UPLOAD_SECRET', 'S3_UPLOAD_BUCKET', 'S3_UPLOAD_REGION', 'S3_UPLOAD_ENDPOINT']
  return fields.some((value) => value !== undefined && value !== '') || variables.some((name) => !!env[name])
}
