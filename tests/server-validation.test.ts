// Every refusal of the upload API, through the Web handler (Request objects) and through the Fastify
// plugin (app.inject). Storage and STS are a tripwire server that counts requests: nothing that
// is refused may reach them.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { s3Upload } from '../server/fastify.ts'
import { createUploadHandler, type UploadHandlerConfig } from '../server/index.ts'
import { signTicket } from '../server/ticket.ts'

let tripwire: Server
let tripwireHits = 0
let endpoint: string

beforeAll(async () => {
  tripwire = createServer((_request, response) => {
    tripwireHits++
    response.writeHead(500).end()
  })
  await new Promise<void>((resolve) => tripwire.listen(0, '127.0.0.1', resolve))
  endpoint = `http://127.0.0.1:${(tripwire.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => tripwire.close(() => resolve())))

const logged: object[] = []
const baseConfig = (): UploadHandlerConfig => ({
  accessKeyId: 'AKID',
  secretAccessKey: 'SECRET',
  bucket: 'uploads',
  region: 'us-east-1',
  endpoint,
  forcePathStyle: true,
  ticketSecret: 'ticket-secret',
  logger: { error: (obj) => void logged.push(obj) },
})

const valid = { filename: 'a.png', filetype: 'image/png', filesize: 10, strategy: 'presigned' }
const forgedTicket = signTicket(
  {
    kind: 'multipart',
    bucket: 'uploads',
    key: 'k',
    uploadId: 'u',
    partSize: 5 * 1024 * 1024,
    filesize: 6 * 1024 * 1024,
    partCount: 2,
    issued: 0,
    expires: 4102444800,
  },
  'some-other-secret',
)

/** [what, path, raw body, status, message pattern]. */
type Case = [what: string, path: string, body: string, status: number, message: RegExp]
const json = JSON.stringify
const cases: Case[] = [
  ['malformed JSON', '', '{"filename":', 400, /not valid JSON/],
  ['an array body', '', '[]', 400, /body must be (a JSON )?object/i],
  ['a null body', '', 'null', 400, /body must be (a JSON )?object/i],
  ['no filename', '', json({ filetype: 'image/png' }), 400, /filename/],
  ['an empty filename', '', json({ ...valid, filename: '' }), 400, /filename/],
  [
    'a numeric filename',
    '',
    json({ ...valid, filename: 123 }),
    400,
    /filename must be a non-empty string, got number 123/,
  ],
  [
    'a filename over 1024 bytes',
    '',
    json({ ...valid, filename: 'é'.repeat(600) }),
    400,
    /at most 1024 bytes \(UTF-8\), got 1200/,
  ],
  ['no filetype', '', json({ filename: 'a.png' }), 400, /filetype/],
  ['a numeric filetype', '', json({ ...valid, filetype: 5 }), 400, /filetype/],
  ['a filetype with a line break', '', json({ ...valid, filetype: 'text/plain\r\nx-evil: 1' }), 400, /filetype/],
  ['a negative filesize', '', json({ ...valid, filesize: -1 }), 400, /filesize/],
  ['a fractional filesize', '', json({ ...valid, filesize: 1.5 }), 400, /filesize/],
  [
    'a filesize as a string',
    '',
    json({ ...valid, filesize: '12' }),
    400,
    /filesize must be a whole number of bytes \(0 or more\), got "12"/,
  ],
  ['a filesize over 5 TiB', '', json({ ...valid, filesize: 6 * 1024 ** 4 }), 413, /5 TiB/],
  ['an unknown strategy', '', json({ ...valid, strategy: 'fast' }), 400, /strategy/],
  [
    'an unknown _nextS3 strategy',
    '',
    json({ ...valid, strategy: undefined, _nextS3: { strategy: 'nope' } }),
    400,
    /strategy/,
  ],
  [
    'markers that disagree',
    '',
    json({ ...valid, strategy: 'token', _nextS3: { strategy: 'presigned' } }),
    400,
    /disagree/,
  ],
  ['an empty body', '', '', 400, /body/i],
  ['/parts without a ticket', '/parts', json({ partNumbers: [1] }), 400, /ticket/],
  ['/parts with no part numbers', '/parts', json({ ticket: forgedTicket, partNumbers: [] }), 400, /partNumbers/],
  [
    '/parts with 101 part numbers',
    '/parts',
    json({ ticket: forgedTicket, partNumbers: range(101) }),
    400,
    /partNumbers/,
  ],
  [
    '/parts with a part number as a string',
    '/parts',
    json({ ticket: forgedTicket, partNumbers: ['1'] }),
    400,
    /partNumbers/,
  ],
  [
    '/parts with a forged ticket',
    '/parts',
    json({ ticket: forgedTicket, partNumbers: [1] }),
    403,
    /ticket was not signed with this server's ticketSecret/,
  ],
  [
    '/parts with a ticket that is not one',
    '/parts',
    json({ ticket: 'abc', partNumbers: [1] }),
    403,
    /ticket is not valid/,
  ],
  [
    '/complete with a part lacking its etag',
    '/complete',
    json({ ticket: forgedTicket, parts: [{ partNumber: 1 }] }),
    400,
    /etag/,
  ],
  ['/complete with no parts', '/complete', json({ ticket: forgedTicket, parts: [] }), 400, /parts/],
  [
    '/complete with a forged ticket',
    '/complete',
    json({ ticket: forgedTicket, parts: [{ partNumber: 1, etag: '"e"' }] }),
    403,
    /ticket/,
  ],
  ['/abort without a ticket', '/abort', json({}), 400, /ticket/],
  [
    '/abort with a forged ticket',
    '/abort',
    json({ ticket: forgedTicket }),
    403,
    /ticket was not signed with this server's ticketSecret/,
  ],
  ['a body over 1 MiB', '', json({ ...valid, padding: 'x'.repeat(1024 * 1024) }), 413, /./],
]

/** Both front doors, same expectations: the Web handler and the Fastify plugin. */
const doors = {
  async web(
    config: UploadHandlerConfig,
    method: string,
    path: string,
    body?: string,
    headers: Record<string, string> = {},
  ) {
    const handler = createUploadHandler(config)
    const response = await handler(
      new Request(`http://app.test/api/s3-upload${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...headers },
        body: method === 'GET' ? undefined : body,
      }),
    )
    const text = await response.text()
    return { status: response.status, headers: Object.fromEntries(response.headers), text }
  },
  async fastify(
    config: UploadHandlerConfig,
    method: string,
    path: string,
    body?: string,
    headers: Record<string, string> = {},
  ) {
    const app: FastifyInstance = Fastify({ logger: false })
    await app.register(s3Upload, config)
    const response = await app.inject({
      method: method as 'POST',
      url: `/api/s3-upload${path}`,
      headers: { 'content-type': 'application/json', ...headers },
      payload: method === 'GET' ? undefined : body,
    })
    await app.close()
    return { status: response.statusCode, headers: response.headers as Record<string, string>, text: response.body }
  },
}

// Regression: the Fastify plugin had JSON schemas of its own that restated protocol/validate.ts and
// worded the same refusal differently ("body/filename must be string" against "filename must be a
// non-empty string, got number 123").
it('both doors refuse every bad request in the same words', async () => {
  for (const [what, path, body] of cases) {
    const [web, fastify] = await Promise.all([
      doors.web(baseConfig(), 'POST', path, body),
      doors.fastify(baseConfig(), 'POST', path, body),
    ])
    expect({ what, status: fastify.status, text: fastify.text }).toEqual({ what, status: web.status, text: web.text })
  }
})

describe.each(Object.entries(doors))('refusals through the %s door', (_door, send) => {
  it.each(cases)('%s', async (_what, path, body, status, message) => {
    const hits = tripwireHits
    const response = await send(baseConfig(), 'POST', path, body)
    expect(response.status).toBe(status)
    expect(response.headers['content-type']).toMatch(/^application\/json/)
    const { error } = JSON.parse(response.text) as { error: string }
    expect(error).toMatch(message)
    expect(tripwireHits).toBe(hits)
  })

  it.each(['', '/parts', '/complete', '/abort'])('GET %s → 405 with Allow: POST', async (path) => {
    const response = await send(baseConfig(), 'GET', path)
    expect(response.status).toBe(405)
    expect(response.headers.allow).toBe('POST')
    expect(JSON.parse(response.text)).toEqual({ error: 'Method GET is not allowed: use POST' })
  })

  it.each(['', '/parts', '/complete', '/abort'])(
    'authorize() false → 403 on %s, before the body is even read',
    async (path) => {
      const hits = tripwireHits
      const seen: string[] = []
      const config = {
        ...baseConfig(),
        authorize: (request: Request) => (seen.push(request.headers.get('x-user') ?? ''), false),
      }
      const response = await send(config, 'POST', path, '{ not json', { 'x-user': 'mallory' })
      expect(response.status).toBe(403)
      expect(JSON.parse(response.text)).toEqual({ error: 'Not authorized to upload' })
      expect(seen).toEqual(['mallory'])
      expect(tripwireHits).toBe(hits)
    },
  )

  it.each([
    [
      'a file over maxFileSize',
      { maxFileSize: 100 },
      { ...valid, filesize: 101 },
      413,
      '101 B is over the 100 B limit (filesize 101, maxFileSize 100 bytes)',
    ],
    [
      'no filesize when maxFileSize is set',
      { maxFileSize: 100 },
      { filename: 'a.png', filetype: 'image/png' },
      400,
      'filesize is required: this upload API accepts files of at most 100 bytes',
    ],
    [
      'a type outside allowedTypes',
      { allowedTypes: ['image/*', 'application/pdf'] },
      { ...valid, filetype: 'text/plain' },
      415,
      "The type 'text/plain' is not accepted here: allowedTypes is image/*, application/pdf",
    ],
    [
      'an empty type against allowedTypes',
      { allowedTypes: ['image/*'] },
      { ...valid, filetype: '' },
      415,
      "The type '' is not accepted here: allowedTypes is image/*",
    ],
    [
      'a token request of a refused type',
      { allowedTypes: ['image/*'] },
      { ...valid, strategy: 'token', filetype: 'text/plain' },
      415,
      "The type 'text/plain' is not accepted here: allowedTypes is image/*",
    ],
  ] as const)('%s, before any credential or URL', async (_what, limits, body, status, error) => {
    const hits = tripwireHits
    const response = await send({ ...baseConfig(), ...limits }, 'POST', '', JSON.stringify(body))
    expect(response.status).toBe(status)
    expect(JSON.parse(response.text)).toEqual({ error })
    expect(tripwireHits).toBe(hits)
  })

  it('a failing STS/S3 call is a 500 "Internal Server Error" with details only in the log', async () => {
    logged.length = 0
    const response = await send(baseConfig(), 'POST', '', JSON.stringify({ ...valid, filesize: 6 * 1024 * 1024 }))
    expect(response.status).toBe(500)
    expect(response.text).toBe('Internal Server Error')
    expect(response.text).not.toContain('SECRET')
  })

  it('an authorize() that throws → 500, logged, nothing issued', async () => {
    logged.length = 0
    const hits = tripwireHits
    const authorize = () => Promise.reject(new Error('session store down'))
    const response = await send({ ...baseConfig(), authorize }, 'POST', '', JSON.stringify(valid))
    expect(response.status).toBe(500)
    expect(response.text).toBe('Internal Server Error')
    expect(JSON.stringify(logged)).toContain('session store down')
    expect(tripwireHits).toBe(hits)
  })

  it.each([
    ['throws', () => Promise.reject(new Error('database down'))],
    ['returns a key with a .. segment', () => 'uploads/../secrets'],
    ['returns an empty key', () => ''],
  ])('a key callback that %s → 500, logged', async (_what, key) => {
    logged.length = 0
    const hits = tripwireHits
    const response = await send({ ...baseConfig(), key }, 'POST', '', JSON.stringify(valid))
    expect(response.status).toBe(500)
    expect(response.text).toBe('Internal Server Error')
    expect(logged).toHaveLength(1)
    expect(tripwireHits).toBe(hits)
  })
})

describe('the Fastify door only', () => {
  it('answers a non-JSON content type with 415 in the { error } shape', async () => {
    const response = await doors.fastify(baseConfig(), 'POST', '', 'filename=a', {
      'content-type': 'application/x-www-form-urlencoded',
    })
    expect(response.status).toBe(415)
    expect(JSON.parse(response.text)).toHaveProperty('error')
  })
})

function range(count: number) {
  return Array.from({ length: count }, (_, i) => i + 1)
}
