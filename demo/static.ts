import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { extname, resolve, sep } from 'node:path'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
}

/**
 * Serves a built page (dist/demo) at `/`: GET (and HEAD, which Fastify derives), files only, nothing outside `root`, no
 * dotfiles. Enough for one Vite build; @fastify/static would be a dependency for this alone.
 * More specific routes (the upload API) win over this wildcard in Fastify's router.
 */
export function serveStatic(app: FastifyInstance, root: string): void {
  const base = resolve(root)
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const file = await findFile(base, request.url)
    if (!file) return reply.code(404).type('text/plain; charset=utf-8').send('Not Found')
    // Vite puts a content hash in every asset name; only index.html must be revalidated.
    const cache = file.path.includes(`${sep}assets${sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache'
    return reply
      .type(TYPES[extname(file.path)] ?? 'application/octet-stream')
      .header('content-length', file.size)
      .header('cache-control', cache)
      .header('x-content-type-options', 'nosniff')
      .send(createReadStream(file.path))
  }
  app.get('/*', handler)
}

async function findFile(base: string, url: string): Promise<{ path: string; size: number } | undefined> {
  let pathname: string
  try {
    pathname = decodeURIComponent(new URL(url, 'http://localhost').pathname)
  } catch {
    return undefined // malformed %-escapes
  }
  if (pathname.endsWith('/')) pathname += 'index.html'
  if (pathname.includes('\0') || pathname.split('/').some((segment) => segment.startsWith('.'))) return undefined
  const path = resolve(base, `.${pathname}`)
  if (!path.startsWith(base + sep)) return undefined
  const info = await stat(path).catch(() => undefined)
  return info?.isFile() ? { path, size: info.size } : undefined
}
