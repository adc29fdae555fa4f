/**
 * `npm start`'s own settings, from the environment (docs/demo.md). The upload API's
 * store settings are its own S3_UPLOAD_* variables (server/config.ts); these are the demo's.
 */
import { join } from 'node:path'
import { DEFAULT_STORE_PORT, portFrom } from '../cli/store.ts'
import { DEFAULT_PORT } from './app.ts'
import { PROJECT_ROOT } from './build-page.ts'

export interface DemoSettings {
  /** PORT: the page and upload API, on localhost. */
  port: number
  /** UPDRAFT_S3_PORT: the embedded store, on 127.0.0.1. */
  storePort: number
  /** UPDRAFT_DATA_DIR: where the embedded store keeps objects. */
  dataDir: string
  /** UPDRAFT_MAX_FILE_SIZE: bytes, or a size such as `30MiB`, `500 KB`, `1.5 GiB`. */
  maxFileSize?: number
  /** UPDRAFT_ALLOWED_TYPES: comma-separated, such as `image/*,application/pdf`. */
  allowedTypes?: string[]
}

type Env = Record<string, string | undefined>

/** Every setting, or a RangeError naming the variable and what it should hold. */
export function demoSettings(env: Env): DemoSettings {
  const types = env.UPDRAFT_ALLOWED_TYPES?.split(',')
    .map((type) => type.trim())
    .filter(Boolean)
  if (types?.some((type) => !/^[\w.+-]+\/(\*|[\w.+-]+)$/.test(type))) {
    throw new RangeError(
      `UPDRAFT_ALLOWED_TYPES must be media types or type/* patterns, comma-separated (image/*,application/pdf), got '${env.UPDRAFT_ALLOWED_TYPES}'`,
    )
  }
  return {
    port: portFrom(env, 'PORT', DEFAULT_PORT),
    storePort: portFrom(env, 'UPDRAFT_S3_PORT', DEFAULT_STORE_PORT),
    dataDir: env.UPDRAFT_DATA_DIR || join(PROJECT_ROOT, '.data', 's3'),
    maxFileSize: env.UPDRAFT_MAX_FILE_SIZE ? parseSize(env.UPDRAFT_MAX_FILE_SIZE) : undefined,
    allowedTypes: types?.length ? types : undefined,
  }
}

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
}

/** `31457280`, `30MiB`, `30 MB`, `1.5GiB` → bytes (KB/MB/GB are powers of 1000, KiB/MiB/GiB of 1024). */
export function parseSize(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text)
  const unit = match && UNITS[match[2]!.toLowerCase()]
  const bytes = unit ? Math.floor(Number(match![1]) * unit) : NaN
  if (!Number.isSafeInteger(bytes) || bytes < 1) {
    throw new RangeError(`UPDRAFT_MAX_FILE_SIZE must be a size such as 31457280, 30MiB or 500KB, got '${text}'`)
  }
  return bytes
}
