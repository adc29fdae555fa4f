// Token tickets: what /refresh and /duplicates act on. Signed, expiring, bound to bucket and key;
// never taken for a multipart ticket nor the reverse; a key in the request body changes nothing.
import type { S3Client } from '@aws-sdk/client-s3'
import { describe, expect, it, vi } from 'vitest'
import { RequestError } from '../../protocol/validate.ts'
import { resolveConfig } from '../../server/config.ts'
import { abortDuplicates, refreshCredentials, signTokenTicket, type TokenRoutesContext, verifyTokenTicket } from '../../server/refresh.ts'
import { signTicket, verifyTicket } from '../../server/ticket.ts'

const NOW = Date.UTC(2025, 0, 1)
const config = resolveConfig({ accessKeyId: 'AK', secretAccessKey: 'SK', bucket: 'uploads', region: 'us-east-1', ticketTtlSeconds: 600 })
const issued: string[] = []
const context: TokenRoutesContext = {
  config,
  s3: {} as S3Client,
  ticketSecret: 'secret',
  issueToken: async (key) => {
    issued.push(key)
    return { AccessKeyId: 'NEW', SecretAccessKey: 'S', SessionToken: 'T', Expiration: new Date(NOW + 3_600_000).toISOString() }
  },
}

const refusal = (run: () => unknown) => {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(RequestError)
    return { status: (error as RequestError).status, message: (error as RequestError).message }
  }
  throw new Error('accepted')
}
const INVALID = { status: 403, message: 'The upload ticket is not valid' }

describe('token tickets', () => {
  it('carry bucket, key and their lifetime', () => {
    const ticket = signTokenTicket(context, 'next-s3-uploads/u/a.bin', NOW)
    expect(ticket).toMatch(/^tok1\./)
    expect(verifyTokenTicket(context, ticket, NOW)).toEqual({
      bucket: 'uploads',
      key: 'next-s3-uploads/u/a.bin',
      issued: NOW / 1000,
      expires: NOW / 1000 + 600,
    })
  })

  it('refuse a changed key, another secret, another bucket, and expiry', () => {
    const ticket = signTokenTicket(context, 'mine.bin', NOW)
    const [version, , signature] = ticket.split('.')
    const theirs = Buffer.from(JSON.stringify({ bucket: 'uploads', key: 'theirs.bin', issued: NOW / 1000, expires: NOW / 1000 + 600 })).toString('base64url')
    expect(refusal(() => verifyTokenTicket(context, `${version}.${theirs}.${signature}`, NOW))).toEqual(INVALID)
    expect(refusal(() => verifyTokenTicket({ ...context, ticketSecret: 'other' }, ticket, NOW))).toEqual(INVALID)
    const otherBucket = { ...context, config: { ...config, bucket: 'elsewhere' } }
    expect(refusal(() => verifyTokenTicket(otherBucket, ticket, NOW))).toEqual(INVALID)
    expect(refusal(() => verifyTokenTicket(context, ticket, NOW + 601_000))).toEqual({
      status: 403,
      message: 'The upload ticket has expired: start the upload again',
    })
  })

  it('a multipart ticket is no token ticket, and a token ticket no multipart ticket', () => {
    const multipart = signTicket(
      { bucket: 'uploads', key: 'k', uploadId: 'u', partSize: 5, filesize: 5, partCount: 1, expires: NOW / 1000 + 60 },
      'secret',
    )
    expect(refusal(() => verifyTokenTicket(context, multipart, NOW))).toEqual(INVALID)
    expect(refusal(() => verifyTicket(signTokenTicket(context, 'k', NOW), 'secret', 'uploads', NOW))).toEqual(INVALID)
  })
})

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
    expect(sent[0]).toMatchObject({ name: 'ListMultipartUploadsCommand', input: { Bucket: 'uploads', Prefix: 'mine.bin' } })
    expect(sent.slice(1)).toEqual([
      { name: 'AbortMultipartUploadCommand', input: { Bucket: 'uploads', Key: 'mine.bin', UploadId: 'duplicate' } },
    ])
  })

  it('refuses a keep that is not an upload id', async () => {
    const ticket = signTokenTicket(context, 'mine.bin')
    await expect(abortDuplicates(context, { ticket, keep: 42 })).rejects.toMatchObject({ status: 400 })
  })
})
