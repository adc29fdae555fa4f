import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { startRgw } from '../../dev/rgw.ts'
import { sdkClient } from '../../dev/s3-client.ts'
import { startS3rver } from '../../dev/s3rver.ts'
import { BUCKET, createTestBuckets } from '../../dev/stores.ts'
import type { UploadTarget } from './child.ts'
import { startNullSink } from './null-sink.ts'
import type { RgwAccess } from './report.ts'
import { selfSignedCertificate } from './tls-cert.ts'

/** A store the benchmarks upload to, and how to drop what they uploaded. */
export interface BenchStore {
  name: 'null sink' | 's3rver' | 'RGW'
  target(key: string): UploadTarget
  /** Deletes the object (and, on RGW, frees its space at once), so long runs do not fill the store. */
  discard(key: string): Promise<void>
  stop(): Promise<void>
}

const ANY_KEYS = { accessKeyId: 'BENCH', secretAccessKey: 'BENCH' }

export async function nullSinkStore(): Promise<BenchStore> {
  const sink = await startNullSink()
  return {
    name: 'null sink',
    target: (key) => ({ endpoint: sink.endpoint, region: 'us-east-1', bucket: BUCKET, key, credentials: ANY_KEYS }),
    discard: async () => {},
    stop: () => sink.stop(),
  }
}

/**
 * The null sink over HTTPS on loopback, with a self-signed certificate made for the run; `ca` is
 * the file a client must trust (runClient's `ca`). Undefined when no certificate can be made.
 */
export async function tlsNullSinkStore(): Promise<(BenchStore & { ca: string }) | undefined> {
  const certificate = await selfSignedCertificate()
  if (!certificate) return undefined
  const sink = await startNullSink({ tls: certificate })
  return {
    name: 'null sink',
    ca: certificate.caFile,
    target: (key) => ({ endpoint: sink.endpoint, region: 'us-east-1', bucket: BUCKET, key, credentials: ANY_KEYS }),
    discard: async () => {},
    async stop() {
      await sink.stop()
      await certificate.remove()
    },
  }
}

export async function s3rverStore(): Promise<BenchStore> {
  const s3rver = await startS3rver()
  const client = sdkClient(s3rver)
  return {
    name: 's3rver',
    target: (key) => ({
      endpoint: s3rver.endpoint,
      region: s3rver.region,
      bucket: s3rver.bucket,
      key,
      credentials: s3rver.credentials,
    }),
    discard: (key) => deleteObject(client, s3rver.bucket, key),
    async stop() {
      client.destroy()
      await s3rver.stop()
    },
  }
}

/**
 * Ceph RGW: the given one (the test run's), or a fresh one of our own. RGW keeps deleted data until
 * its garbage collector runs (2 h later by default) and the memstore OSD holds 4 GiB, so with our
 * own cluster every discard also runs `radosgw-admin gc process --include-all`.
 */
export async function rgwStore(given?: RgwAccess): Promise<BenchStore> {
  let access = given
  let stop = async () => {}
  if (!access) {
    const rgw = await startRgw()
    access = {
      endpoint: rgw.endpoint,
      region: rgw.region,
      credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
      bucket: BUCKET,
      stateDir: rgw.stateDir,
    }
    await createTestBuckets(access)
    stop = () => rgw.stop()
  }
  const { stateDir, bucket } = access
  const client = sdkClient(access)
  const store = access
  return {
    name: 'RGW',
    target: (key) => ({ endpoint: store.endpoint, region: store.region, bucket, key, credentials: store.credentials }),
    async discard(key) {
      await deleteObject(client, bucket, key)
      if (!stateDir) return
      const config = ['-c', join(stateDir, 'ceph.conf'), '-n', 'client.admin', '-k', join(stateDir, 'keyring')]
      await promisify(execFile)('radosgw-admin', [...config, 'gc', 'process', '--include-all'])
    },
    async stop() {
      client.destroy()
      await stop()
    },
  }
}

async function deleteObject(client: S3Client, bucket: string, key: string) {
  await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })).catch(() => {})
}
