// Keys with characters that URLs and SigV4 treat specially (issue 14): a space, `+` (a space in a
// query string, itself in a path), unicode, `?` and `#` (a URL's query and fragment), `%` (an
// escape), and the marks encodeURIComponent leaves alone but SigV4 encodes. Each round-trips on
// s3rver and Ceph RGW: the object lands on exactly that key and reads back byte-exact.
import { DeleteObjectCommand } from '@aws-sdk/client-s3'
import { describe, expect, inject, it } from 'vitest'
import { readObject, sha256, testBytes } from '../dev/s3-client.ts'
import type { TestStore } from '../dev/stores.ts'
import { ApiError, upload, uploadObject } from '../engine/index.ts'
import { MIN_PART_SIZE } from '../protocol/limits.ts'
import { uploadApiFixture } from './helpers/upload-api-fixture.ts'

const AWKWARD = "dir/a b+c ü 写真?#%25%!'()*~.txt"
/**
 * A token policy names its key in an IAM Resource, where `?` and `*` are wildcards; the upload API
 * escapes them as policy variables where the store has them (AWS), and refuses such keys for token
 * mode where it has none, as RGW 16.2 (the last test). Token-mode keys here keep every other awkward character.
 */
const AWKWARD_FOR_TOKEN = "dir/a b+c ü 写真#%25%!'()~.txt"
const SIZES = { single: 1000, multipart: MIN_PART_SIZE + 1 }

const { stores, uploadApiFor, readerFor, tokenSts } = uploadApiFixture()

async function expectStored(store: TestStore, key: string, bytes: Uint8Array) {
  const reader = readerFor(store)
  expect(sha256(await readObject(reader, store.bucket, key))).toBe(sha256(bytes))
  await reader.send(new DeleteObjectCommand({ Bucket: store.bucket, Key: key }))
}

describe.each(Object.entries(stores))('on %s', (_name, store) => {
  it.each(Object.entries(SIZES))('uploadObject, %s: the object is on exactly that key', async (_kind, size) => {
    const bytes = testBytes(size, size)
    const key = `keys/${crypto.randomUUID()}/${AWKWARD}`
    const result = await uploadObject(new Blob([bytes]), {
      bucket: store().bucket,
      key,
      region: store().region,
      endpoint: store().endpoint,
      forcePathStyle: true,
      credentials: store().credentials,
    })
    expect(result.key).toBe(key)
    await expectStored(store(), key, bytes)
  })

  describe.each([
    ['presigned', AWKWARD],
    ['token', AWKWARD_FOR_TOKEN],
  ] as const)('through the upload API, %s mode, a key from its key callback', (strategy, name) => {
    it.each(Object.entries(SIZES))('%s', async (_kind, size) => {
      const bytes = testBytes(size, size + 1)
      const key = `next-s3-uploads/${crypto.randomUUID()}/${name}`
      const { api } = await uploadApiFor(store(), { key: () => key, sts: tokenSts(store()) })
      const result = await upload(new File([bytes], 'ignored.bin', { type: 'application/octet-stream' }), {
        api,
        strategy,
      })
      expect(result.key).toBe(key)
      await expectStored(store(), key, bytes)
    })
  })
})

it('token mode on RGW, a custom key with an IAM wildcard: refused at the upload API (RGW has no policy variables to name it), never widened', async () => {
  const rgw = inject('rgw')
  const key = `next-s3-uploads/${crypto.randomUUID()}/${AWKWARD}`
  const { api, client } = await uploadApiFor(rgw, { key: () => key, sts: tokenSts(rgw) })
  const refused = await upload(new File([testBytes(1000, 3)], 'ignored.bin'), { api, strategy: 'token' }).catch(
    (error: unknown) => error,
  )
  expect(refused).toBeInstanceOf(ApiError)
  expect(refused).toMatchObject({
    status: 400,
    message: expect.stringMatching(
      /holds '\?', which token credentials cannot name on this store.*strategy 'presigned'/,
    ),
  })
  await expect(readObject(client, rgw.bucket, key)).rejects.toMatchObject({ name: 'NoSuchKey' })
})
