import { S3Client, UploadPartCommand } from '@aws-sdk/client-s3'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import autocannon, { type Result } from 'autocannon'
import { type LoadBalancer, startHaproxy } from '../dev/haproxy.ts'
import { startRedis } from '../dev/redis-server.ts'
import { objectUrl } from '../protocol/object-url.ts'
import { createPresigner } from '../server/presigner.ts'
import { nullSinkStore } from './lib/bench-stores.ts'
import { startService } from './lib/child.ts'
import { type Benchmark, fixed, type Goal, MiB, median, ratio, rotate, type Table } from './lib/report.ts'

const KEYS = { accessKeyId: 'AKIDBENCHSERVER', secretAccessKey: 'bench-server-secret' }
const LOCATION = {
  bucket: 'uploads',
  key: 'next-s3-uploads/0b7a4f0e-2c1d-4f43-9d5e-1f6c2a3b4c5d/holiday-video.mp4',
  region: 'us-east-1',
}

/** Issue 5, item 6: part-URL presigning per CPU-second, and the upload API on Fastify under load. */
export const uploadApi: Benchmark = {
  name: 'upload-api',
  title: '6. Upload API',
  async run({ quick, log }) {
    const presign = await presignRate({ count: quick ? 200 : 3000, rounds: quick ? 1 : 5, log })
    const load = await loadTest({ seconds: quick ? 1 : 5, rounds: quick ? 1 : 3, log })
    const scale = await scalingTest({ seconds: quick ? 1 : 5, rounds: quick ? 1 : 3, log })
    presign.goal.note += ` The upload API signs single-PUT and part URLs alike with it: ${load.rates['presigned PUT']} req/s for a single-PUT URL, ${load.rates['presigned /parts (8 URLs)']} req/s for a /parts call that signs 8 URLs.`
    return {
      tables: [presign.table, load.table, scale.table],
      goals: [presign.goal],
      headlines: [
        `Presigning part URLs: ${presign.headline}`,
        `Upload API (Fastify, 10 connections): ${load.headline}`,
        `Several instances behind haproxy (presigned PUT): ${scale.headline}`,
      ],
      notes: [
        `Presign rate: UploadPart URLs (partNumber, uploadId, signed content-length, 3600 s), one after another in this process; CPU = user + system time of the loop. Median of ${quick ? 1 : 5} alternating rounds after a warm-up; the ratio is the median of per-round ratios.`,
        "Both rows are @aws-sdk/s3-request-presigner. The upload API's way (server/presigner.ts): one S3RequestPresigner per credential, `presign()` on a prepared HttpRequest. getSignedUrl runs an S3Client's middleware stack and endpoint rules per URL, on a client with `requestChecksumCalculation: WHEN_REQUIRED`, as the upload API configures its own (server/storage.ts).",
        'Load: autocannon in this process, the upload API on Fastify in a child process, the STS stand-in (dev/sts-server.ts, which verifies each SigV4 request) in another: three processes on the 2 cores, so req/s is a floor for a dedicated server.',
        'Several instances: 1, 2 and 3 upload API processes (the same upload API on Fastify) behind haproxy 2.6 (round robin, a connection per request to the instance: `option http-server-close`), beside the one process alone; the last row counts every request in one Redis (`rateLimit: { redis }`, with a limit no run reaches), as instances sharing a limit do. On this 2-core machine autocannon, haproxy and the instances share the cores, so added instances cannot add CPU: the rows measure what the balancer and the shared count cost, not how far a real fleet scales.',
        'Rows: token = POST the upload request, the upload API calls STS GetFederationToken; presigned = POST for a 1 MiB file, one presigned PutObject URL (SDK presigner); parts = POST /parts for 8 part URLs of a multipart ticket (server/presigner.ts + ticket check).',
      ],
    }
  },
}

async function presignRate({ count, rounds, log }: { count: number; rounds: number; log: (message: string) => void }) {
  const client = new S3Client({
    region: LOCATION.region,
    credentials: KEYS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  })
  const presign = createPresigner(KEYS, LOCATION.region)
  const url = objectUrl(LOCATION)
  const uploadId = 'VXBsb2FkIElEIGZvciBlbHZpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA'
  const cpuSeconds = async (work: () => Promise<void> | void) => {
    const start = process.cpuUsage()
    await work()
    const used = process.cpuUsage(start)
    return (used.user + used.system) / 1e6
  }
  const contenders = {
    prepared: (n: number) => async () => {
      for (let part = 1; part <= n; part++) {
        await presign({
          method: 'PUT',
          url,
          query: { partNumber: String(part), uploadId },
          headers: { 'content-length': String(8 * MiB) },
          expiresIn: 3600,
        })
      }
    },
    command: (n: number) => async () => {
      for (let part = 1; part <= n; part++) {
        await getSignedUrl(
          client,
          new UploadPartCommand({
            Bucket: LOCATION.bucket,
            Key: LOCATION.key,
            UploadId: uploadId,
            PartNumber: part,
            ContentLength: 8 * MiB,
          }),
          { expiresIn: 3600 },
        )
      }
    },
  }
  await cpuSeconds(contenders.command(50))
  await cpuSeconds(contenders.prepared(50))
  const rates = { prepared: [] as number[], command: [] as number[] }
  for (let round = 0; round < rounds; round++) {
    for (const name of rotate(['prepared', 'command'] as const, round)) {
      rates[name].push(count / (await cpuSeconds(contenders[name](count))))
    }
    log(
      `presign round ${round}: presign() ${fixed(rates.prepared.at(-1)!)}/CPU-s, getSignedUrl ${fixed(rates.command.at(-1)!)}/CPU-s`,
    )
  }
  client.destroy()
  const speedup = median(rates.prepared.map((rate, i) => rate / rates.command[i]!))
  const table: Table = {
    title: `Part-URL presigns per CPU-second (${count} per round, median of ${rounds})`,
    columns: ['presigner', 'presigns / CPU-s', 'µs CPU each', 'vs getSignedUrl'],
    rows: [
      [
        "`S3RequestPresigner.presign` on a prepared request (server/presigner.ts, the upload API's)",
        fixed(median(rates.prepared)),
        fixed(1e6 / median(rates.prepared), 1),
        ratio(speedup),
      ],
      [
        '`getSignedUrl(client, new UploadPartCommand(…))`',
        fixed(median(rates.command)),
        fixed(1e6 / median(rates.command), 1),
        ratio(1),
      ],
    ],
  }
  const goal: Goal = {
    goal: 'Part-URL presigns per CPU-second: S3RequestPresigner.presign on a prepared request >= 3x getSignedUrl',
    figure: ratio(speedup),
    met: speedup >= 3,
    note: "The upload API presigns as the first row does: one S3RequestPresigner per credential, a prepared HttpRequest per URL (server/presigner.ts), rather than getSignedUrl's middleware stack and endpoint rules per URL.",
  }
  return {
    table,
    goal,
    headline: `${fixed(median(rates.prepared))}/CPU-s with S3RequestPresigner.presign, ${ratio(speedup)} getSignedUrl.`,
  }
}

interface Mode {
  name: string
  short: string
  path: string
  body: () => Record<string, unknown>
}

async function loadTest({ seconds, rounds, log }: { seconds: number; rounds: number; log: (message: string) => void }) {
  const s3 = await nullSinkStore()
  const sts = await startService('sts-server', KEYS)
  const server = await startService('upload-api-server', {
    stsEndpoint: sts.url,
    s3Endpoint: s3.target('x').endpoint,
    keys: KEYS,
  })
  try {
    const api = `${server.url}/api/s3-upload`
    const upload = (strategy: string, filesize: number) => ({
      filename: 'holiday video.mp4',
      filetype: 'video/mp4',
      filesize,
      strategy,
      _nextS3: { strategy: strategy === 'token' ? 'aws-sdk' : 'presigned' },
    })
    // A multipart ticket for the /parts rows: one presigned upload of 256 MiB (CreateMultipartUpload on the null sink).
    const started = (await (await post(api, upload('presigned', 256 * MiB))).json()) as {
      ticket?: string
      error?: string
    }
    if (!started.ticket) throw new Error(`No multipart ticket from the upload API: ${JSON.stringify(started)}`)
    const modes: Mode[] = [
      {
        name: 'token (STS GetFederationToken via the stand-in)',
        short: 'token',
        path: '',
        body: () => upload('token', 1 * MiB),
      },
      { name: 'presigned, single PUT URL', short: 'presigned PUT', path: '', body: () => upload('presigned', 1 * MiB) },
      {
        name: 'presigned multipart, /parts with 8 URLs',
        short: 'presigned /parts (8 URLs)',
        path: '/parts',
        body: () => ({ ticket: started.ticket, partNumbers: [1, 2, 3, 4, 5, 6, 7, 8] }),
      },
    ]
    for (const mode of modes) {
      const reply = await post(api + mode.path, mode.body())
      if (!reply.ok) throw new Error(`${mode.name}: the upload API answered ${reply.status} ${await reply.text()}`)
    }
    const results = new Map<string, Result[]>(modes.map((mode) => [mode.name, []]))
    // A short warm-up per mode (JIT, connection pools), not counted.
    for (const mode of modes) await cannon(api + mode.path, mode.body(), 1)
    for (let round = 0; round < rounds; round++) {
      for (const mode of rotate(modes, round)) {
        const result = await cannon(api + mode.path, mode.body(), seconds)
        results.get(mode.name)!.push(result)
        log(
          `upload API ${mode.name}: ${fixed(result.requests.average)} req/s, p99 ${result.latency.p99} ms, non-2xx ${result.non2xx}`,
        )
      }
    }
    const table: Table = {
      title: `Upload API on Fastify under autocannon (10 connections, ${seconds} s per run, median of ${rounds})`,
      columns: ['mode', 'req/s', 'p50 ms', 'p99 ms', 'errors + non-2xx'],
      rows: modes.map((mode) => {
        const runs = results.get(mode.name)!
        return [
          mode.name,
          fixed(median(runs.map((run) => run.requests.average))),
          fixed(median(runs.map((run) => run.latency.p50)), 1),
          fixed(median(runs.map((run) => run.latency.p99)), 1),
          String(runs.reduce((sum, run) => sum + run.errors + run.timeouts + run.non2xx, 0)),
        ]
      }),
    }
    const rate = (name: string) => fixed(median(results.get(name)!.map((run) => run.requests.average)))
    const rates = Object.fromEntries(modes.map((mode) => [mode.short, rate(mode.name)]))
    return { table, rates, headline: `${modes.map((mode) => `${mode.short} ${rate(mode.name)} req/s`).join(', ')}.` }
  } finally {
    await server.stop()
    await sts.stop()
    await s3.stop()
  }
}

/** Issue 26: requests per second through a load balancer in front of 1, 2 and 3 instances, beside one process alone. */
async function scalingTest({
  seconds,
  rounds,
  log,
}: {
  seconds: number
  rounds: number
  log: (message: string) => void
}) {
  const s3 = await nullSinkStore()
  const sts = await startService('sts-server', KEYS)
  const redis = await startRedis()
  const base = { stsEndpoint: sts.url, s3Endpoint: s3.target('x').endpoint, keys: KEYS }
  const servers = await Promise.all([1, 2, 3].map(() => startService('upload-api-server', base)))
  const counted = await Promise.all(
    [1, 2, 3].map(() => startService('upload-api-server', { ...base, redisUrl: redis.url })),
  )
  const balancers: LoadBalancer[] = []
  try {
    const balanced = async (targets: typeof servers) => {
      const balancer = await startHaproxy(targets.map(({ url }) => url))
      balancers.push(balancer)
      return balancer.origin
    }
    const setups = [
      { name: 'one instance, no load balancer', origin: servers[0]!.url },
      { name: 'haproxy → 1 instance', origin: await balanced(servers.slice(0, 1)) },
      { name: 'haproxy → 2 instances', origin: await balanced(servers.slice(0, 2)) },
      { name: 'haproxy → 3 instances', origin: await balanced(servers) },
      { name: 'haproxy → 3 instances, limit counted in Redis', origin: await balanced(counted) },
    ]
    const body = { filename: 'holiday video.mp4', filetype: 'video/mp4', filesize: MiB, strategy: 'presigned' }
    for (const setup of setups) {
      const reply = await post(`${setup.origin}/api/s3-upload`, body)
      if (!reply.ok) throw new Error(`${setup.name}: the upload API answered ${reply.status} ${await reply.text()}`)
      await cannon(`${setup.origin}/api/s3-upload`, body, 1)
    }
    const results = new Map<string, Result[]>(setups.map(({ name }) => [name, []]))
    for (let round = 0; round < rounds; round++) {
      for (const setup of rotate(setups, round)) {
        const result = await cannon(`${setup.origin}/api/s3-upload`, body, seconds)
        results.get(setup.name)!.push(result)
        log(
          `scaling ${setup.name}: ${fixed(result.requests.average)} req/s, p99 ${result.latency.p99} ms, non-2xx ${result.non2xx}`,
        )
      }
    }
    // Redis stopped: the instances that count there let requests through uncounted (fail open)
    // without waiting for it. tests/several-instances.test.ts counts that they do; this row is how fast.
    await redis.kill()
    const down = await cannon(`${setups.at(-1)!.origin}/api/s3-upload`, body, seconds)
    log(
      `scaling Redis stopped: ${fixed(down.requests.average)} req/s, p99 ${down.latency.p99} ms, non-2xx ${down.non2xx}`,
    )
    const rate = (name: string) => median(results.get(name)!.map((run) => run.requests.average))
    const alone = rate(setups[0]!.name)
    const table: Table = {
      title: `Upload API instances behind a load balancer: presigned PUT upload requests (10 connections, ${seconds} s per run, median of ${rounds})`,
      columns: ['setup', 'req/s', 'vs one instance alone', 'p99 ms', 'errors + non-2xx'],
      rows: setups
        .map(({ name }) => {
          const runs = results.get(name)!
          return [
            name,
            fixed(rate(name)),
            ratio(rate(name) / alone),
            fixed(median(runs.map((run) => run.latency.p99)), 1),
            String(runs.reduce((sum, run) => sum + run.errors + run.timeouts + run.non2xx, 0)),
          ]
        })
        .concat([
          [
            'haproxy → 3 instances, limit counted in Redis, Redis stopped (one run)',
            fixed(down.requests.average),
            ratio(down.requests.average / alone),
            fixed(down.latency.p99, 1),
            String(down.errors + down.timeouts + down.non2xx),
          ],
        ]),
    }
    return {
      table,
      headline: `${setups
        .slice(1)
        .map(({ name }) => `${name.replace('haproxy → ', '')} ${fixed(rate(name))} req/s`)
        .join(', ')} (one alone ${fixed(alone)}).`,
    }
  } finally {
    for (const balancer of balancers) await balancer.stop()
    for (const server of [...servers, ...counted]) await server.stop()
    await redis.stop()
    await sts.stop()
    await s3.stop()
  }
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

const cannon = (url: string, body: unknown, duration: number) =>
  autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    connections: 10,
    duration,
  })
