// `npm run demo:rgw`: the demo against a throwaway Ceph RGW with STS on this machine, so token mode
// can be seen working without an AWS account (docs/local-token-mode.md). The RGW comes from the
// test suite's bootstrap (dev/rgw.ts): one mon, one in-memory OSD and radosgw on free
// loopback ports, a user, and a role that user may assume. Everything is gone when this stops.
import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'
import { CreateBucketCommand, PutBucketCorsCommand, S3Client } from '@aws-sdk/client-s3'
import { startRgw } from '../dev/rgw.ts'
import { DEFAULT_RATE_LIMIT } from '../server/fastify.ts'
import { startApp } from './app.ts'
import { stopWithLauncher } from './launcher.ts'
import { readableLogger } from './readable-log.ts'
import { demoSettings } from './settings.ts'

const CEPH = ['radosgw', 'radosgw-admin', 'ceph-mon', 'ceph-osd', 'ceph', 'monmaptool', 'ceph-authtool']
const CEPH_INSTALL = 'sudo apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd'
const BUCKET = 'uploads'

/** The Ceph programs missing from PATH (Debian puts them in /usr/bin). */
const missingCeph = (path = process.env.PATH ?? '') =>
  CEPH.filter(
    (name) =>
      !path
        .split(delimiter)
        .filter(Boolean)
        .some((dir) => isExecutable(join(dir, name))),
  )

async function main() {
  const missing = missingCeph()
  if (missing.length > 0) {
    console.error(
      `updraft: token mode needs Ceph RGW on this machine, and ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not installed. On Debian or Ubuntu:\n  ${CEPH_INSTALL}`,
    )
    process.exit(1)
  }
  const settings = demoSettings(process.env)
  console.log('Starting Ceph RGW with STS (a few seconds; up to a minute on a busy machine)…')
  const rgw = await startRgw()
  let running: Awaited<ReturnType<typeof startApp>> | undefined
  let stopping = false
  const stop = async (reason: string, code = 0) => {
    if (stopping) process.exit(130)
    stopping = true
    console.log(`\n${reason}: stopping…`)
    await running?.close().catch(() => {})
    await rgw.stop()
    console.log('Stopped.')
    process.exit(code)
  }
  process.on('SIGINT', () => void stop('SIGINT'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
  stopWithLauncher(() => void stop('npm was stopped'))

  try {
    await createBucket(rgw)
    running = await startApp({
      port: settings.port,
      config: {
        accessKeyId: rgw.accessKeyId,
        secretAccessKey: rgw.secretAccessKey,
        bucket: BUCKET,
        region: rgw.region,
        endpoint: rgw.endpoint,
        forcePathStyle: true,
        // Token mode: the upload API asks RGW's STS for credentials limited to one key (AssumeRole with a session policy).
        sts: { mode: 'assume-role', roleArn: rgw.roleArn, endpoint: rgw.endpoint },
        maxFileSize: settings.maxFileSize,
        allowedTypes: settings.allowedTypes,
      },
      log: (line) => console.log(line),
      logger: readableLogger((line) => console.error(line)),
    })
  } catch (error) {
    console.error('updraft: could not start:', (error as Error).message)
    return stop('failed', 1)
  }

  const info = await running.app.inject({ method: 'GET', url: `${running.prefix}/info` }).then((reply) => reply.json())
  console.log(`Updraft demo on Ceph RGW: ${running.url}`)
  console.log(`  upload API  ${running.url}${running.prefix}`)
  console.log(`  storage     Ceph RGW at ${rgw.endpoint} · bucket ${BUCKET} (in memory: gone when this stops)`)
  console.log(
    `  modes       presigned${info.token ? ' and token (STS AssumeRole, one key per credential)' : `. Token mode is off: ${info.tokenUnavailableReason}`}`,
  )
  console.log(
    `  keys        S3_UPLOAD_KEY=${rgw.accessKeyId} S3_UPLOAD_SECRET=${rgw.secretAccessKey} S3_UPLOAD_ROLE_ARN=${rgw.roleArn}`,
  )
  console.log(`  limits      ${DEFAULT_RATE_LIMIT.max} upload API requests per minute per client`)
  console.log('Press Ctrl-C to stop.')
}

/** The bucket, with a CORS rule for any origin: RGW listens on loopback only and lives as long as this process. */
async function createBucket(rgw: Awaited<ReturnType<typeof startRgw>>) {
  const client = new S3Client({
    region: rgw.region,
    endpoint: rgw.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
  })
  try {
    await client.send(new CreateBucketCommand({ Bucket: BUCKET }))
    const rule = {
      AllowedOrigins: ['*'],
      AllowedMethods: ['GET', 'HEAD', 'PUT', 'POST', 'DELETE'],
      AllowedHeaders: ['*'],
      ExposeHeaders: ['ETag'],
      MaxAgeSeconds: 3000,
    }
    await client.send(new PutBucketCorsCommand({ Bucket: BUCKET, CORSConfiguration: { CORSRules: [rule] } }))
  } finally {
    client.destroy()
  }
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK)
    return true
  } catch {
    return false
  }
}

main().catch((error: unknown) => {
  console.error('updraft: could not start:', error)
  process.exit(1)
})
