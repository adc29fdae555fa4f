import { RequestError } from './request-error.ts'

/** A route of the upload API: `upload` is the upload request on the upload API's own path, the others are under it. */
export type Route =
  | 'upload'
  | 'parts'
  | 'complete'
  | 'abort'
  | 'list-parts'
  | 'info'
  | 'refresh'
  | 'duplicates'
  | 'batch'
  | 'batch-complete'

/**
 * The upload API's routes, by path under its mount point (docs/server.md, "Routes"): the one
 * table the Web handler and the Fastify plugin both route by. `/list-parts` answers only with
 * `resumable`; `/refresh` and `/duplicates` serve token mode; `/batch` and `/batch/complete` are the
 * upload request and `/complete` for several files at once (server/batch.ts).
 */
export const ROUTES: Readonly<Record<Route, { readonly path: string; readonly method: 'POST' | 'GET' }>> =
  Object.freeze({
    upload: { path: '', method: 'POST' },
    parts: { path: '/parts', method: 'POST' },
    complete: { path: '/complete', method: 'POST' },
    abort: { path: '/abort', method: 'POST' },
    'list-parts': { path: '/list-parts', method: 'POST' },
    refresh: { path: '/refresh', method: 'POST' },
    duplicates: { path: '/duplicates', method: 'POST' },
    batch: { path: '/batch', method: 'POST' },
    'batch-complete': { path: '/batch/complete', method: 'POST' },
    info: { path: '/info', method: 'GET' },
  })

const BY_PATH = new Map(Object.entries(ROUTES).map(([route, { path }]) => [path, route as Route]))

/**
 * Which route a request's URL path names, for a handler mounted at `mount` (a normalized `path`
 * setting: no trailing `/`, `''` for the root): a route, or the 404 to answer. Trailing slashes
 * are ignored, as most frameworks ignore them; nothing else is guessed, so a mistyped route
 * (`…/complet`) is refused rather than taken for the upload request.
 */
export function routeOf(method: string, pathname: string, mount: string): Route | RequestError {
  const path = pathname.replace(/\/+$/, '')
  if (path !== mount && !path.startsWith(`${mount}/`)) return outsideMount(pathname, mount)
  return BY_PATH.get(path.slice(mount.length)) ?? unknownRoute(method, pathname, mount)
}

/** A path under the upload API that is none of its routes: says what was asked and what exists. */
export function unknownRoute(method: string, pathname: string, mount: string): RequestError {
  const routes = Object.values(ROUTES).map(({ path, method }) => `${method} ${mount}${path || (mount ? '' : '/')}`)
  return new RequestError(404, `No route ${method} ${pathname} on the upload API; it answers ${routes.join(', ')}`)
}

/**
 * A request outside the handler's `path`: the handler was mounted somewhere its setting does not
 * say (a catch-all at another path), so the 404 names the setting, and where it seems to be mounted.
 */
function outsideMount(pathname: string, mount: string): RequestError {
  const path = pathname.replace(/\/+$/, '')
  // The longest route path the URL ends with (`/batch/complete` before `/complete`).
  const route = [...BY_PATH.keys()]
    .filter((suffix) => suffix !== '' && path.endsWith(suffix))
    .sort((a, b) => b.length - a.length)[0]
  const here = (route ? path.slice(0, -route.length) : path) || '/'
  return new RequestError(
    404,
    `No upload API at ${pathname}: this handler's path setting is '${mount || '/'}'. ` +
      `If you mounted it at ${here}, create it with createUploadHandler({ path: '${here}' })`,
  )
}
