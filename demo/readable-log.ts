import type { FastifyServerOptions } from 'fastify'

const LEVELS: Record<number, string> = { 30: 'info', 40: 'warning', 50: 'error', 60: 'fatal' }

/**
 * Fastify's logger for `npm start`, writing one plain line per event instead of pino's JSON:
 * `error: updraft: abort failed (route abort): NoSuchBucket: …`. The stack stays out: the
 * upload API's failures are expected ones (a store refusing), and their message says which.
 */
export function readableLogger(write: (line: string) => void): FastifyServerOptions['logger'] {
  return {
    level: 'warn',
    stream: {
      write(json: string) {
        let entry: { level?: number; msg?: string; route?: string; err?: { message?: string; code?: string } }
        try {
          entry = JSON.parse(json)
        } catch {
          return write(json.trimEnd())
        }
        const where = entry.route ? ` (route ${entry.route})` : ''
        const why = entry.err?.message
          ? `: ${entry.err.code && !entry.err.message.startsWith(entry.err.code) ? `${entry.err.code}: ` : ''}${entry.err.message}`
          : ''
        write(`${LEVELS[entry.level ?? 50] ?? 'log'}: ${entry.msg ?? ''}${where}${why}`)
      },
    },
  }
}
