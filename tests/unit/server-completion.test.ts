// /complete's judgement on what storage answered, for the answers the stores in tests/ cannot be
// made to give (a key without s3:GetObject, a failed delete, an object older than its ticket, a
// typeless token upload); the flows themselves run on s3rver and RGW in upload-completion.test.ts.
import type { S3Client } from '@aws-sdk/client-s3'
import { describe, expect, it } from 'vitest'
import { parseMediaType } from '../../protocol/content-type.ts'
import { completeUpload } from '../../server/completion.ts'
import { resolveConfig } from '../../server/config.ts'
import { hasFileSignature, matchesFileSignature } from '../../server/file-signatures.ts'
import type { MultipartContext } from '../../server/multipart.ts'
import type { Ticket } from '../../server/ticket.ts'

const NOW_S = Math.floor(Date.now() / 1000)
const ticket: Ticket = {
  kind: 'put',
  bucket: 'uploads',
  key: 'k.bin',
  uploadId: 'u-1',
  filesize: 3,
  contentType: 'application/octet-stream',
  issued: NOW_S,
  expires: NOW_S + 60,
}

/** An S3 client whose replies the test writes: `head` answers HeadObject, `remove` DeleteObject. */
function contextWith(head: () => unknown, remove: () => unknown = () => ({}), issued: Ticket = ticket) {
  const sent: string[] = []
  const called: unknown[] = []
  const logged: unknown[] = []
  const s3 = {
    send: async (command: { constructor: { name: string } }) => {
      sent.push(command.constructor.name)
      if (command.constructor.name === 'HeadObjectCommand') return head()
      if (command.constructor.name === 'DeleteObjectCommand') return remove()
      throw new Error(`unexpected ${command.constructor.name}`)
    },
  } as unknown as S3Client
  const config = resolveConfig({
    accessKeyId: 'AK',
    secretAccessKey: 'SK',
    bucket: 'uploads',
    region: 'us-east-1',
    onUploadComplete: (upload) => void called.push(upload),
  })
  const context = { config, s3, ticketSecret: 's' } as unknown as MultipartContext
  const logger = { error: (obj: object, msg?: string) => void logged.push({ obj, msg }) }
  return {
    run: () => completeUpload(context, issued, undefined, new Request('http://app.test/'), logger),
    sent,
    called,
    logged,
  }
}

const stored = (extra: object = {}) => ({
  ContentLength: 3,
  ContentType: 'application/octet-stream',
  ETag: '"e"',
  LastModified: new Date(),
  ...extra,
})
const storageError = (status: number, name: string) =>
  Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } })

describe('/complete against storage’s answers', () => {
  it('a server key without s3:GetObject: a 500 that says what the key needs (logged), nothing deleted or called', async () => {
    const { run, sent, called, logged } = contextWith(() => Promise.reject(storageError(403, 'AccessDenied')))
    await expect(run()).rejects.toMatchObject({
      status: 500,
      message:
        'The server cannot check uploads: its key needs s3:GetObject and s3:DeleteObject on them (npx updraft-s3 doctor)',
    })
    expect(sent).toEqual(['HeadObjectCommand'])
    expect(called).toEqual([])
    expect(JSON.stringify(logged)).toContain('AccessDenied')
  })

  it('an object older than the ticket is not this upload’s: 409, left alone', async () => {
    const { run, sent, called } = contextWith(() => stored({ LastModified: new Date((NOW_S - 3600) * 1000) }))
    await expect(run()).rejects.toMatchObject({ status: 409 })
    expect(sent).toEqual(['HeadObjectCommand'])
    expect(called).toEqual([])
  })

  it('a failed delete still refuses, and says the object was not deleted', async () => {
    const { run, called, logged } = contextWith(
      () => stored({ ContentLength: 4 }),
      () => Promise.reject(storageError(403, 'AccessDenied')),
    )
    await expect(run()).rejects.toMatchObject({
      status: 422,
      message: 'The uploaded object was refused and not deleted: it holds 4 bytes, not the 3 declared',
    })
    expect(called).toEqual([])
    expect(JSON.stringify(logged)).toContain('could not delete')
  })

  it('a typeless token upload (no Content-Type sent) is stored as binary/octet-stream: that is the default type issued', async () => {
    const { run, called } = contextWith(() => stored({ ContentType: 'binary/octet-stream' }))
    await expect(run()).resolves.toMatchObject({ key: 'k.bin', etag: '"e"' })
    expect(called).toHaveLength(1)
  })

  it('media types compare as media types: case and spacing do not matter, parameters do', async () => {
    // What the upload request issued: the canonical form (protocol/content-type.ts).
    const typed: Ticket = { ...ticket, contentType: parseMediaType('text/plain; charset=utf-8').value }
    for (const [storedType, accepted] of [
      ['Text/Plain;Charset=utf-8', true],
      ['text/plain', false],
      ['text/html; charset=utf-8', false],
    ] as const) {
      const { run } = contextWith(() => stored({ ContentType: storedType }), undefined, typed)
      const outcome = await run().then(
        () => true,
        () => false,
      )
      expect(outcome, storedType).toBe(accepted)
    }
  })
})

describe('file signatures', () => {
  const bytes = (...values: Array<number | string>) =>
    new Uint8Array(
      values.flatMap((value) => (typeof value === 'string' ? [...value].map((c) => c.charCodeAt(0)) : [value])),
    )

  it.each([
    ['image/png', bytes(0x89, 'PNG', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13)],
    ['image/jpeg', bytes(0xff, 0xd8, 0xff, 0xe1)],
    ['image/gif', bytes('GIF89a')],
    ['image/webp', bytes('RIFF', 1, 2, 3, 4, 'WEBPVP8 ')],
    ['application/pdf', bytes('%PDF-1.4')],
    ['video/mp4', bytes(0, 0, 0, 0x20, 'ftypisom')],
    ['video/webm', bytes(0x1a, 0x45, 0xdf, 0xa3)],
  ])('%s: its own first bytes match, HTML does not', (type, first) => {
    expect(hasFileSignature(type)).toBe(true)
    expect(matchesFileSignature(type, first)).toBe(true)
    expect(matchesFileSignature(type, bytes('<!doctype html>'))).toBe(false)
    expect(matchesFileSignature(type, new Uint8Array())).toBe(false)
  })

  it('types without a known signature are not checked', () => {
    expect(hasFileSignature('text/plain')).toBe(false)
    expect(matchesFileSignature('application/zip', bytes('<html>'))).toBe(true)
  })
})
