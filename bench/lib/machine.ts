import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'
import { join } from 'node:path'

const PACKAGES = [
  'aws4fetch',
  '@aws-sdk/client-s3',
  '@aws-sdk/lib-storage',
  '@aws-sdk/s3-request-presigner',
  'next-s3-upload',
  '@uppy/core',
  '@uppy/aws-s3',
  '@20minutes/s3rver',
  'fastify',
  'autocannon',
  'esbuild',
  'playwright-core',
]

const quiet = (file: string, args: string[]) => {
  try {
    return (
      execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
        .trim()
        .split('\n')[0] ?? ''
    )
  } catch {
    return 'not found'
  }
}

/** 1-, 5- and 15-minute load averages: on a shared machine, the context every figure needs. */
export const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')

export function machineLines(): string[] {
  const version = (name: string) => {
    try {
      return (JSON.parse(readFileSync(join('node_modules', name, 'package.json'), 'utf8')) as { version: string })
        .version
    } catch {
      return '?'
    }
  }
  const commit = quiet('git', ['rev-parse', '--short', 'HEAD'])
  // The benchmarks' own output is not code: a section re-run after another still measures HEAD.
  const dirty = quiet('git', [
    'status',
    '--porcelain',
    '--untracked-files=no',
    '--',
    '.',
    ':!bench/RESULTS.md',
    ':!bench/charts',
  ])
    ? ' + uncommitted changes'
    : ''
  return [
    `CPU: ${cpus()[0]?.model ?? '?'} x ${cpus().length} cores; ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM; Linux ${quiet('uname', ['-r'])}`,
    `Node ${process.version}; ${quiet('/usr/bin/chromium', ['--version'])}; ${quiet('radosgw', ['--version']).replace(/ \([0-9a-f]+\)/, '')}`,
    `Packages: ${PACKAGES.map((name) => `${name} ${version(name)}`).join(', ')}`,
    `Code: git ${commit}${dirty}`,
  ]
}
