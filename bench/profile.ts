// Issue 28: where one Node upload's CPU goes, per GiB, by phase. Each row is one upload in a fresh
// child (bench/clients/node-upload.ts) with the inspector's sampling profiler on around the timed
// upload only; the raw node:http ceiling is profiled the same way beside it.
// `npx tsx bench/profile.ts [MiB] [body...]`, bodies: buffer, blob, file, https-buffer, https-blob,
// https-file (default: all). Profiles stay in bench/.cache/profiles/ for Chrome DevTools.
import { mkdirSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BenchStore, nullSinkStore, tlsNullSinkStore } from './lib/bench-stores.ts'
import { writeBodyFile } from './lib/body-file.ts'
import { CACHE_DIR, type ClientSpec, type Contender, runClient } from './lib/child.ts'
import { breakdown } from './lib/cpu-profile.ts'
import { fixed, MiB, mbps } from './lib/report.ts'

const size = Number(process.argv[2] ?? 256) * MiB
const wanted = process.argv.slice(3)
const GiB = 1024 * MiB
const folder = await mkdtemp(join(tmpdir(), 'updraft-profile-'))
const file = join(folder, 'body.bin')
await writeBodyFile(file, size)
const out = join(CACHE_DIR, 'profiles')
mkdirSync(out, { recursive: true })

const bodies = {
  buffer: { body: { kind: 'memory', size }, bodyAs: 'buffer', ceiling: 'http-ceiling-buffer' },
  blob: { body: { kind: 'memory', size }, ceiling: 'http-ceiling' },
  file: { body: { kind: 'file', path: file }, ceiling: 'http-ceiling' },
} as const satisfies Record<string, Pick<ClientSpec, 'body' | 'bodyAs'> & { ceiling: Contender }>

try {
  for (const tls of [false, true]) {
    const store: (BenchStore & { ca?: string }) | undefined = tls ? await tlsNullSinkStore() : await nullSinkStore()
    if (!store) {
      console.log('no openssl: HTTPS left out')
      continue
    }
    try {
      for (const [name, { ceiling, ...spec }] of Object.entries(bodies)) {
        const label = `${tls ? 'https-' : ''}${name}`
        if (wanted.length > 0 && !wanted.includes(label)) continue
        for (const contender of ['updraft', ceiling] as const) {
          const profile = join(out, `${label}-${contender}.cpuprofile`)
          const key = `bench/profile/${label}-${contender}.bin`
          const result = await runClient({
            contender,
            target: store.target(key),
            ...spec,
            partSize: 8 * MiB,
            queueSize: 4,
            warmUp: true,
            ca: store.ca,
            profile,
          })
          const { phase, leaf, busy, idle } = breakdown(profile)
          const perGiB = (seconds: number) => fixed((seconds * GiB) / result.bytes, 3)
          console.log(
            `\n## ${label}, ${contender}: ${fixed(mbps(result.bytes, result.seconds))} MB/s, process CPU ${perGiB(result.cpuSeconds)} s/GiB, main thread busy ${perGiB(busy)} s/GiB, idle ${perGiB(idle)} s/GiB`,
          )
          console.log('by phase (innermost frame of this repository on the stack), s/GiB:')
          for (const [group, seconds] of phase.filter(([, s]) => (s * GiB) / result.bytes >= 0.003))
            console.log(`  ${perGiB(seconds).padStart(7)}  ${group}`)
          console.log('by what ran (leaf frame), s/GiB:')
          for (const [group, seconds] of leaf.filter(([, s]) => (s * GiB) / result.bytes >= 0.003))
            console.log(`  ${perGiB(seconds).padStart(7)}  ${group}`)
        }
      }
    } finally {
      await store.stop()
    }
  }
} finally {
  await rm(folder, { recursive: true, force: true })
}
