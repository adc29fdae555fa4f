// Token mode's /refresh and /duplicates act on the key of the ticket (tests/unit/server-ticket.test.ts),
// never on a key the request body names.
import type { S3Client } from '@aws-sdk/client-s3'
import { describe, expect, it, vi } from 'vitest'
import { resolveConfig } from '../../server/config.ts'
import { abortDuplicates, refreshCredentials, signTokenTicket, type TokenRoutesContext } from '../../server/refresh.ts'

const NOW = Date.UTC(2025, 0, 1)
const config = resolveConfig({
  accessKeyId: 'AK',
  secretAccessKey: 'SK',
  bucket: 'uploads',
  region: 'us-east-1',
  ticketTtlSeconds: 600,
})
const issued: string[] = []
const context: TokenRoutesContext = {
  config,
  s3: {} as S3Client,
  ticketSecret: 'secret',
  issueToken: async (key) => {
    issued.push(key)
    return {
      AccessKeyId: 'NEW',
      SecretAccessKey: 'S',
      SessionToken: 'T',
      Expiration: new Date(NOW + 3_600_000).toISOString(),
    }
  },
}

describe('/refresh', () => {
  it('issues credentials for the ticket key, whatever key the body names', async () => {
    const ticket = signTokenTicket(context, 'mine.bin')
    const reply = await refreshCredentials(context, { ticket, key: 'theirs.bin', filename: 'theirs.bin' })
    expect(reply.token.Credentials.AccessKeyId).toBe('NEW')
    expect(issued.at(-1)).toBe('mine.bin')
  })

  it('refuses a request without a ticket, before issuing anything', async () => {
    const before = issued.length
    await expect(refreshCredentials(context, { key: 'theirs.bin' })).rejects.toMatchObject({ status: 400 })
    expect(issued.length).toBe(before)
  })
})

describe('/duplicates', () => {
  it('aborts the uploads on the ticket key started since the ticket, but the one kept', async () => {
    const issuedAt = Date.now()
    const ticket = signTokenTicket(context, 'mine.bin', issuedAt)
    const sent: Array<{ name: string; input: Record<string, unknown> }> = []
    const s3 = {
      send: vi.fn(async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
        sent.push({ name: command.constructor.name, input: command.input })
        if (command.constructor.name === 'ListMultipartUploadsCommand') {
          return {
            Uploads: [
              { Key: 'mine.bin', UploadId: 'kept', Initiated: new Date(issuedAt + 1000) },
              { Key: 'mine.bin', UploadId: 'duplicate', Initiated: new Date(issuedAt + 500) },
              { Key: 'mine.bin', UploadId: 'older', Initiated: new Date(issuedAt - 3_600_000) },
              { Key: 'mine.bin.other', UploadId: 'other-key', Initiated: new Date(issuedAt + 500) },
            ],
          }
        }
        return {}
      }),
    } as unknown as S3Client
    expect(await abortDuplicates({ ...context, s3 }, { ticket, keep: 'kept' })).toEqual({ aborted: 1 })
    expect(sent[0]).toMatchObject({
      name: 'ListMultipartUploadsCommand',
      input: { Bucket: 'uploads', Prefix: 'mine.bin' },
    })
    expect(sent.slice(1)).toEqual([
      { name: 'AbortMultipartUploadCommand', input: { Bucket: 'uploads', Key: 'mine.bin', UploadId: 'duplicate' } },
    ])
  })

  it('refuses a keep that is not an upload id', async () => {
    const ticket = signTokenTicket(context, 'mine.bin')
    await expect(abortDuplicates(context, { ticket, keep: 42 })).rejects.toMatchObject({ status: 400 })
  })
})
