import type { UploadTypes } from '../protocol/wire.ts'
import type { Logger, UploadHandlerConfig } from './config.ts'
import { ConfigurationFault, createFaultLog } from './config-faults.ts'
import { routeOf } from './routes.ts'
import { createUploadApi } from './upload-api.ts'

/**
 * The upload API: a Web `Request` in, a `Response` out; never rejects (a client mistake is a 4xx
 * JSON `{ error }`, anything unexpected a logged `500 Internal Server Error`). Its type
 * parameters carry the config's metadata and `serverData` types (never a value), so a page in the
 * same project can write `upload<typeof handler>(…)`.
 */
export type UploadHandler<Metadata = unknown, ServerData = unknown> = ((request: Request) => Promise<Response>) &
  UploadTypes<Metadata, ServerData>

/**
 * The upload API as a Web-standard handler, for Next.js route handlers, Hono and Workers
 * alike (the Fastify plugin, server/fastify.ts, runs the same upload API under its own routes). With
 * no config it reads the S3_UPLOAD_* environment; missing settings throw here, not on the first
 * upload.
 *
 * Mount it at its `path` (default `/api/s3-upload`) and everything under it (a catch-all): it
 * answers `POST {path}` (the upload request), `{path}/parts`, `/complete`, `/abort`,
 * `/list-parts` (presigned multipart), `/refresh`, `/duplicates` (token mode) and `GET {path}/info`
 * (server/routes.ts). Any other path answers 404 with a JSON `{ error }` naming the routes, or,
 * outside `path`, naming the `path` setting; nothing is signed or issued for it. Refusals are
 * `RequestError`s answered as 4xx JSON `{ error }` (400 bad request, 403 not authorized or
 * cross-site, 404 no such route, 413 too large, 415 type not allowed, 429 throttled); the handler
 * itself never rejects.
 *
 * A framework that loads the route's module without its settings (`next build`) wants
 * {@link createLazyUploadHandler}, which creates this on the first request and answers a missing
 * setting as `ServerMisconfigured` rather than a thrown error the framework makes a bare 500.
 *
 * @param config - Every setting optional: what is left out comes from `S3_UPLOAD_*`; see {@link UploadHandlerConfig}.
 * @returns The handler, `(request: Request) => Promise<Response>`.
 * @throws `TypeError` when a required setting is missing (the message names every one, with its
 * environment variable) or a setting is invalid (`partSize` under 5 MiB, a `path` that is not a
 * URL path, an unknown `sts.mode`, `presignWith: 'session'` without an STS, …).
 * @example
 * ```ts
 * // app/api/s3-upload/[[...path]]/route.ts (Next.js App Router)
 * import { createUploadHandler, type UploadHandler } from 'updraft-s3/server'
 *
 * let handle: UploadHandler | undefined // created on first use: `next build` runs without S3_UPLOAD_*
 * const upload = (request: Request) =>
 *   (handle ??= createUploadHandler({
 *     maxFileSize: 100 * 1024 * 1024,
 *     allowedTypes: ['image/*', 'application/pdf'],
 *     authorize: (request) => isSignedIn(request.headers.get('cookie')),
 *   }))(request)
 *
 * export const POST = upload
 * export const GET = upload // …/info
 * ```
 */
export function createUploadHandler<Metadata = unknown, ServerData = unknown>(
  config?: UploadHandlerConfig<Metadata, ServerData>,
): UploadHandler<Metadata, ServerData> {
  const api = createUploadApi(config as UploadHandlerConfig)
  return async (request) => {
    const route = routeOf(request.method, new URL(request.url).pathname, api.config.path)
    if (typeof route !== 'string') return api.refuse(request, route)
    return (await api.preamble(request, route)) ?? api.respond(request, route)
  }
}

/**
 * {@link createUploadHandler}, created on the first request rather than at once: for a framework
 * that loads a route's module without its settings (`next build`). A setting missing or invalid
 * is then answered as what it is, a fault no retry heals: 500 `{ error, code: 'ServerMisconfigured' }`
 * (pages do not retry it), and the log hears the `TypeError` naming every setting, with
 * `npx updraft-s3 doctor`, once a minute at most. Each request tries again, so settings fixed
 * without a restart are taken up. Was, with the handler created by hand on first use: a plain 500
 * the page retried for 27 s.
 *
 * @param config - As {@link createUploadHandler}'s.
 * @example
 * ```ts
 * // app/api/s3-upload/[[...path]]/route.ts (Next.js App Router)
 * import { createLazyUploadHandler } from 'updraft-s3/server'
 *
 * const upload = createLazyUploadHandler()
 * export const POST = upload
 * export const GET = upload // …/info
 * ```
 */
export function createLazyUploadHandler<Metadata = unknown, ServerData = unknown>(
  config?: UploadHandlerConfig<Metadata, ServerData>,
): UploadHandler<Metadata, ServerData> {
  let handle: UploadHandler<Metadata, ServerData> | undefined
  const logFault = createFaultLog()
  const logger: Logger = config?.logger ?? { error: (obj, msg) => console.error(msg, obj) }
  return async (request) => {
    try {
      handle ??= createUploadHandler(config)
    } catch (error) {
      if (!(error instanceof TypeError)) throw error
      const fault = new ConfigurationFault(
        'settings',
        'settings',
        `${error.message}. Run npx updraft-s3 doctor to check every setting`,
        error,
      )
      logFault(fault, logger)
      return Response.json(
        { error: fault.message, code: fault.code },
        { status: fault.status, headers: { 'cache-control': 'no-store' } },
      )
    }
    return handle(request)
  }
}
