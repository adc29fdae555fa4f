// Issue 14, a short side-by-side run on the null sink: Updraft with a Node Buffer body, with a Blob
// body and with a stream of 64 KiB chunks (length unknown), beside raw node:http ceilings.
// `npx tsx bench/buffer-body.ts [rounds] [MiB]`; `npm run bench -- throughput` has the Buffer rows.

import { nullSinkStore } from './lib/bench-stores.ts'
import { type ClientResult, type Contender, runClient } from './lib/child.ts'
import { fixed, MiB, mbps, median } from './lib/report.ts'

const rounds = Number(process.argv[2] ?? 3)
const size = Number(process.argv[3] ?? 256) * MiB
const partSize = 8 * MiB
const contenders: Contender[] = ['updraft-buffer', 'http-ceiling-buffer', 'updraft', 'http-ceiling', 'updraft-stream']
const store = await nullSinkStore()
const runs = new Map<Contender, ClientResult[]>(contenders.map((id) => [id, []]))
try {
  for (let round = 0; round < rounds; round++) {
    for (const id of contenders) {
      const key = `bench/buffer/${id}-${round}.bin`
      const result = await runClient({
        contender: id,
        target: store.target(key),
        body: { kind: 'memory', size },
        partSize,
        queueSize: 4,
        warmUp: true,
      })
      await store.discard(key)
      runs.get(id)!.push(result)
      console.error(
        `round ${round} ${id}: ${fixed(mbps(result.bytes, result.seconds))} MB/s, ${fixed(result.cpuSeconds, 2)} CPU-s`,
      )
    }
  }
} finally {
  await store.stop()
}
const speed = (r: ClientResult) => mbps(r.bytes, r.seconds)
const ratio = (a: Contender, b: Contender) => {
  const ratios = runs.get(a)!.map((r, i) => speed(r) / speed(runs.get(b)![i]!))
  return `${fixed(median(ratios), 2)}x ${b} (rounds: ${ratios.map((x) => fixed(x, 2)).join(', ')})`
}
for (const [id, results] of runs) {
  console.log(
    `${id}: ${fixed(median(results.map(speed)))} MB/s median of ${rounds}, CPU ${fixed(median(results.map((r) => r.cpuSeconds)), 2)} s`,
  )
}
console.log(
  `updraft-buffer: ${ratio('updraft-buffer', 'http-ceiling-buffer')}; ${ratio('updraft-buffer', 'http-ceiling')}`,
)
console.log(`updraft (Blob): ${ratio('updraft', 'http-ceiling')}`)
console.log(`updraft-stream (64 KiB chunks, length unknown): ${ratio('updraft-stream', 'http-ceiling-buffer')}`)
