import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { AwsClient } from 'aws4fetch'
import type { StoreAccess } from '../../dev/s3-client.ts'

/**
 * A stand-in for S3 Express One Zone (directory buckets), which no open store implements, in
 * front of a REAL store (s3rver or RGW). It speaks what AWS documents, checked here independently
 * of the code under test:
 * - CreateSession (`GET /{bucket}/?session`), answered only to a SigV4 request signed as service
 *   `s3express` by a known key pair (with its STS token in `x-amz-security-token` when it has
 *   one), with short-lived session credentials
 *   (https://docs.aws.amazon.com/AmazonS3/latest/API/API_CreateSession.html);
 * - every other request must be signed with a session it issued that has not expired: header
 *   SigV4 for service `s3express` carrying `x-amz-s3session-token`, or the presigned query form
 *   carrying `X-Amz-S3session-Token`. Others get S3's 403 XML. Good ones are forwarded to the real
 *   store's bucket the directory bucket's name maps to, signed again with the store's own keys,
 *   and its reply passed back as is, so what is uploaded reads back from the real store.
 * Path-style only (`http://127.0.0.1:PORT/{bucket}/{key}`): loopback has no zonal host names.
 */

interface KeyPair {
  accessKeyId: string
  secretAccessKey: string
  sessionToken?: string
}

interface IssuedSession {
  secretAccessKey: string
  sessionToken: string
  bucket: string
  /** ms since the epoch; the stand-in refuses the session after it. */
  expires: number
}

export interface S3ExpressStandIn {
  /** http://127.0.0.1:PORT, a custom endpoint for `awsEndpoints()` and the server's config. */
  endpoint: string
  /** Directory bucket names of every CreateSession answered with credentials, in order. */
  sessions: string[]
  /** Object requests forwarded to the store: `METHOD /bucket/key?query`. */
  forwarded: string[]
  /** Requests refused, with the S3 error code sent. */
  refused: Array<{ request: string; code: string }>
  /** Every session issued so far expires now: the next request signed with one gets 403 ExpiredToken. */
  expireSessions(): void
  stop(): Promise<void>
}

export interface S3ExpressOptions {
  /** The real store behind the stand-in, with its own keys. */
  store: StoreAccess
  /** Directory bucket name → the store's bucket that holds its objects. */
  buckets: Record<string, string>
  /** Key pairs allowed to CreateSession (their sessionToken, when set, must come along). */
  callers: KeyPair[]
  /** Lifetime of the sessions issued, as stated in their Expiration. @default 300 (AWS's 5 minutes) */
  sessionSeconds?: number
  /** The stand-in's clock (issuing and expiring sessions, presigned URLs' expiry). @default Date.now */
  now?: () => number
}

/** Query parameters of a presigned request, left out of what is forwarded. */
const AUTH_QUERY =
  /^x-amz-(algorithm|credential|date|expires|signedheaders|signature|content-sha256|s3session-token|security-token)$/i
/** Headers not forwarded: this hop's signature, and what the store's new signature or fetch sets. */
const HOP_HEADERS = new Set([
  'host',
  'authorization',
  'x-amz-date',
  'x-amz-content-sha256',
  'x-amz-s3session-token',
  'x-amz-security-token',
  'connection',
  'content-length',
  'transfer-encoding',
  'expect',
])

/**
 * Starts the stand-in on a free loopback port. Sessions live `sessionSeconds` (as their Expiration
 * says), or until `expireSessions()`; the store is reached with its own keys.
 */
export async function startS3ExpressStandIn({
  store,
  buckets,
  callers,
  sessionSeconds = 300,
  now = Date.now,
}: S3ExpressOptions): Promise<S3ExpressStandIn> {
  const issued = new Map<string, IssuedSession>()
  const sessions: string[] = []
  const forwarded: string[] = []
  const refused: S3ExpressStandIn['refused'] = []
  const storeClient = new AwsClient({ ...store.credentials, service: 's3', region: store.region })

  const server = createServer(async (request, response) => {
    // Any page may call it (as a bucket whose CORS allows every origin); replies expose the ETag.
    response.setHeader('access-control-allow-origin', '*')
    response.setHeader('access-control-expose-headers', 'ETag')
    if (request.method === 'OPTIONS') {
      response.writeHead(200, {
        'access-control-allow-methods': 'GET, PUT, POST, DELETE, HEAD',
        'access-control-allow-headers': request.headers['access-control-request-headers'] ?? '*',
        'access-control-max-age': '3000',
      })
      return response.end()
    }
    try {
      const body = await readBody(request)
      const url = new URL(request.url ?? '/', 'http://stand-in')
      // The AWS SDK, path-style on a custom endpoint, leaves an empty segment after a directory
      // bucket's name (`/{bucket}//{key}`, `/{bucket}//?session`); the engine does not. Both mean `key`.
      const [, bucket = '', ...keyParts] = url.pathname.replace(/^(\/[^/]+)\/\//, '$1/').split('/')
      const key = keyParts.join('/')
      const refuse = (status: number, code: string, message: string) => {
        refused.push({ request: `${request.method} ${url.pathname}${url.search}`, code })
        sendError(response, status, code, message)
      }
      const target = buckets[decodeURIComponent(bucket)]
      if (!target) return refuse(404, 'NoSuchBucket', 'The specified bucket does not exist')

      if (url.searchParams.has('session') && !key) {
        const caller = checkHeaderSignature(request, url, body, 's3express', (id) =>
          callers.find((c) => c.accessKeyId === id),
        )
        if (typeof caller === 'string') return refuse(403, caller, `CreateSession refused: ${caller}`)
        if (caller.sessionToken !== undefined && request.headers['x-amz-security-token'] !== caller.sessionToken) {
          return refuse(403, 'InvalidToken', 'The provided token is malformed or otherwise invalid')
        }
        const accessKeyId = `SESSION${randomBytes(8).toString('hex').toUpperCase()}`
        const session: IssuedSession = {
          secretAccessKey: randomBytes(24).toString('base64'),
          sessionToken: `stand-in-s3session-${randomUUID()}`,
          bucket,
          expires: now() + sessionSeconds * 1000,
        }
        issued.set(accessKeyId, session)
        sessions.push(decodeURIComponent(bucket))
        response.writeHead(200, { 'content-type': 'application/xml' })
        return response.end(`<?xml version="1.0" encoding="UTF-8"?>
<CreateSessionResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Credentials><SessionToken>${session.sessionToken}</SessionToken><SecretAccessKey>${session.secretAccessKey}</SecretAccessKey><AccessKeyId>${accessKeyId}</AccessKeyId><Expiration>${new Date(session.expires).toISOString()}</Expiration></Credentials></CreateSessionResult>`)
      }

      const presigned = url.searchParams.has('X-Amz-Signature')
      const lookup = (id: string) => {
        const session = issued.get(id)
        return session && { accessKeyId: id, ...session }
      }
      const found = presigned
        ? checkQuerySignature(request, url, lookup, now())
        : checkHeaderSignature(request, url, body, 's3express', lookup)
      if (typeof found === 'string') return refuse(403, found, `Signature check failed: ${found}`)
      const token = presigned ? url.searchParams.get('X-Amz-S3session-Token') : request.headers['x-amz-s3session-token']
      if (token !== found.sessionToken || found.bucket !== bucket)
        return refuse(403, 'InvalidToken', 'The provided token is malformed or otherwise invalid')
      if (now() >= found.expires) return refuse(403, 'ExpiredToken', 'The provided token has expired')

      const query = [...url.searchParams].filter(([name]) => !AUTH_QUERY.test(name))
      const search = query.length
        ? `?${query.map(([k, v]) => (v === '' ? rfc3986(k) : `${rfc3986(k)}=${rfc3986(v)}`)).join('&')}`
        : ''
      const headers = Object.fromEntries(
        Object.entries(request.headers)
          .filter(([name]) => !HOP_HEADERS.has(name))
          .map(([name, value]) => [name, String(value)]),
      )
      forwarded.push(`${request.method} /${bucket}/${key}${search}`)
      const reply = await storeClient.fetch(`${store.endpoint}/${target}/${key}${search}`, {
        method: request.method,
        headers,
        body: body.length ? new Uint8Array(body) : undefined,
      })
      const replyBody = Buffer.from(await reply.arrayBuffer())
      // fetch has decoded the body: its own length, unless a HEAD's (no body, the object's length).
      const replyHeaders = Object.fromEntries(
        [...reply.headers].filter(
          ([name]) =>
            name !== 'content-encoding' && name !== 'transfer-encoding' && !name.startsWith('access-control-'),
        ),
      )
      if (request.method !== 'HEAD') replyHeaders['content-length'] = String(replyBody.length)
      response.writeHead(reply.status, replyHeaders)
      response.end(replyBody)
    } catch (error) {
      response.writeHead(500, { 'content-type': 'application/xml' })
      response.end(`<Error><Code>InternalError</Code><Message>${String(error)}</Message></Error>`)
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    endpoint: `http://127.0.0.1:${port}`,
    sessions,
    forwarded,
    refused,
    expireSessions() {
      for (const session of issued.values()) session.expires = now()
    },
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      }),
  }
}

type Signer = { accessKeyId: string; secretAccessKey: string }

/**
 * SigV4 in the Authorization header (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html),
 * recomputed here: the signer `lookup` finds, or the S3 error code of the mismatch.
 */
function checkHeaderSignature<T extends Signer>(
  request: IncomingMessage,
  url: URL,
  body: Buffer,
  service: string,
  lookup: (id: string) => T | undefined,
): T | string {
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      request.headers.authorization ?? '',
    )
  if (!match) return 'AccessDenied'
  const [, accessKeyId, day, region, signedService, signedHeaders, signature] = match as unknown as string[]
  const signer = lookup(accessKeyId!)
  if (!signer) return 'InvalidAccessKeyId'
  if (signedService !== service) return 'SignatureDoesNotMatch'
  const amzDate = String(request.headers['x-amz-date'] ?? '')
  if (!amzDate.startsWith(day!)) return 'SignatureDoesNotMatch'
  const names = signedHeaders!.split(';')
  // Every x-amz-* header sent must be signed (the session token above all), and host always.
  if (
    !names.includes('host') ||
    Object.keys(request.headers).some((name) => name.startsWith('x-amz-') && !names.includes(name))
  )
    return 'AccessDenied'
  const payloadHash = String(request.headers['x-amz-content-sha256'] ?? '')
  if (payloadHash !== 'UNSIGNED-PAYLOAD' && payloadHash !== sha256(body)) return 'XAmzContentSHA256Mismatch'
  const canonicalHeaders = names
    .map(
      (name) =>
        `${name}:${String(request.headers[name] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('')
  const canonical = [
    request.method,
    rawPath(request),
    canonicalQuery(url),
    canonicalHeaders,
    signedHeaders,
    payloadHash,
  ].join('\n')
  const expected = signatureOf(signer.secretAccessKey, amzDate, day!, region!, service, canonical)
  return expected === signature ? signer : 'SignatureDoesNotMatch'
}

/** SigV4 in the query string (presigned URLs), with X-Amz-Expires enforced. */
function checkQuerySignature<T extends Signer>(
  request: IncomingMessage,
  url: URL,
  lookup: (id: string) => T | undefined,
  now: number,
): T | string {
  const params = url.searchParams
  const [accessKeyId = '', day = '', region = '', service = '', terminator] = (
    params.get('X-Amz-Credential') ?? ''
  ).split('/')
  if (params.get('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256' || terminator !== 'aws4_request') return 'AccessDenied'
  const signer = lookup(accessKeyId)
  if (!signer) return 'InvalidAccessKeyId'
  if (service !== 's3express') return 'SignatureDoesNotMatch'
  const amzDate = params.get('X-Amz-Date') ?? ''
  const signedAt = Date.parse(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'))
  if (!amzDate.startsWith(day) || Number.isNaN(signedAt)) return 'AuthorizationQueryParametersError'
  if (now > signedAt + Number(params.get('X-Amz-Expires')) * 1000) return 'AccessDenied'
  const signedHeaders = params.get('X-Amz-SignedHeaders') ?? ''
  const names = signedHeaders.split(';')
  // AWS refuses x-amz-* headers a presigned URL does not sign (x-amz-copy-source, x-amz-acl, …).
  if (
    !names.includes('host') ||
    Object.keys(request.headers).some((name) => name.startsWith('x-amz-') && !names.includes(name))
  )
    return 'AccessDenied'
  const canonicalHeaders = names
    .map(
      (name) =>
        `${name}:${String(request.headers[name] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('')
  const unsigned = new URL(url)
  unsigned.searchParams.delete('X-Amz-Signature')
  const payloadHash = params.get('X-Amz-Content-Sha256') ?? 'UNSIGNED-PAYLOAD'
  const canonical = [
    request.method,
    rawPath(request),
    canonicalQuery(unsigned),
    canonicalHeaders,
    signedHeaders,
    payloadHash,
  ].join('\n')
  const expected = signatureOf(signer.secretAccessKey, amzDate, day, region, service, canonical)
  return expected === params.get('X-Amz-Signature') ? signer : 'SignatureDoesNotMatch'
}

function signatureOf(secret: string, amzDate: string, day: string, region: string, service: string, canonical: string) {
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    amzDate,
    `${day}/${region}/${service}/aws4_request`,
    sha256(canonical),
  ].join('\n')
  let key: Buffer = hmac(`AWS4${secret}`, day)
  for (const part of [region, service, 'aws4_request']) key = hmac(key, part)
  return createHmac('sha256', key).update(stringToSign).digest('hex')
}

/** S3 signs the path exactly as sent: encoded once, never normalised. */
const rawPath = (request: IncomingMessage) => (request.url ?? '/').split('?')[0]!

const canonicalQuery = (url: URL) =>
  [...url.searchParams]
    .map(([k, v]) => [rfc3986(k), rfc3986(v)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&')

function sendError(response: ServerResponse, status: number, code: string, message: string) {
  response.writeHead(status, { 'content-type': 'application/xml' })
  response.end(`<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>${code}</Code><Message>${message}</Message><RequestId>${randomUUID()}</RequestId></Error>`)
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex')
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest()
const rfc3986 = (value: string) =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
